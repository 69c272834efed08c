package lineinfo

import (
	"cmp"
	"slices"
	"sort"
	"strings"
)

// A Table is the line table of one executable.
type Table struct {
	// Files are the source files the rows name: absolute, cleaned paths
	// (relative only when the producer recorded no absolute directory).
	// Row.File indexes Files.
	Files []string

	// Rows are the statement rows (is_stmt set) of every sequence, sorted
	// by Addr, then Line, then File. End-of-sequence rows, rows at line 0
	// ("no source line") and zero-length rows at a sequence's end address
	// are left out; several rows at one address with different lines are
	// all kept, since control enters each of those lines there.
	Rows []Row

	// lookup holds every row (statement or not) and every sequence end,
	// sorted by address, sequence ends first at equal addresses.
	lookup []entry
}

// A Row is one statement row of the line table: the instruction at Addr
// begins (part of) source line Line of Files[File].
type Row struct {
	Addr uint64 // link-time address
	File uint32 // index into Table.Files
	Line uint32 // 1-based source line
}

// table sorts what the builder collected into a Table.
func (b *builder) table() *Table {
	slices.SortFunc(b.rows, func(x, y Row) int {
		return cmp.Or(cmp.Compare(x.Addr, y.Addr), cmp.Compare(x.Line, y.Line), cmp.Compare(x.File, y.File))
	})
	b.rows = slices.Compact(b.rows)
	slices.SortFunc(b.all, func(x, y entry) int {
		if c := cmp.Compare(x.addr, y.addr); c != 0 {
			return c
		}
		// An end_sequence at X closes [start, X); a row at X of another
		// sequence opens the next range, so it must win the lookup.
		if x.end != y.end {
			if x.end {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.ord, y.ord)
	})
	return &Table{Files: b.files, Rows: b.rows, lookup: b.all}
}

// Lookup returns the source line of the instruction at addr: the row,
// statement or not, whose range [row, next row of its sequence) holds
// addr. Of several rows at one address the last one wins, as in
// debuggers. ok is false when no sequence covers addr or its row has no
// source line.
func (t *Table) Lookup(addr uint64) (file string, line int, ok bool) {
	i := sort.Search(len(t.lookup), func(i int) bool { return t.lookup[i].addr > addr }) - 1
	if i < 0 {
		return "", 0, false
	}
	e := t.lookup[i]
	if e.end || e.file == noFile || e.line == 0 || int(e.file) >= len(t.Files) {
		return "", 0, false
	}
	return t.Files[e.file], int(e.line), true
}

// goProcSuffix is a file every Go program's line table names.
const goProcSuffix = "/src/runtime/proc.go"

// GoRoot returns "$GOROOT/src/" (with a trailing slash) when the table
// belongs to a Go program, recognised by its runtime/proc.go, and "" for
// any other program.
func (t *Table) GoRoot() string {
	for _, f := range t.Files {
		if strings.HasSuffix(f, goProcSuffix) {
			return strings.TrimSuffix(f, "runtime/proc.go")
		}
	}
	return ""
}
