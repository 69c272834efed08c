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

	md5 map[string][16]byte // DW_LNCT_MD5 by file (MD5)

	goRoot   string    // "$GOROOT/src/", when read with DeferGoStd
	deferred *deferred // the Go root's units, not yet run (gostd.go)
}

// RowsIn returns the statement rows in [lo, hi): a function's, when lo
// and hi are its bounds.
func (t *Table) RowsIn(lo, hi uint64) []Row {
	i := sort.Search(len(t.Rows), func(i int) bool { return t.Rows[i].Addr >= lo })
	j := i
	for j < len(t.Rows) && t.Rows[j].Addr < hi {
		j++
	}
	return t.Rows[i:j]
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
	// Both lists come in sequence order: runs in address order, one per
	// sequence, which a linker lays out mostly in address order too.
	byAddr := func(x, y Row) int {
		return cmp.Or(cmp.Compare(x.Addr, y.Addr), cmp.Compare(x.Line, y.Line), cmp.Compare(x.File, y.File))
	}
	sortIfNot(b.rows, byAddr)
	b.rows = slices.Compact(b.rows)
	sortIfNot(b.all, func(x, y entry) int {
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
	return &Table{Files: b.files, Rows: b.rows, lookup: b.all, md5: b.md5}
}

// MD5 returns the MD5 digest of the contents of file (a path of Files) as
// the DWARF 5 line table records it (DW_LNCT_MD5, which clang and
// assemblers given `.file N "name" md5 0x...` write; gcc 12 does not);
// ok is false when it records none. When units disagree, the first
// unit's wins. [DWARF5 6.2.4.1]
func (t *Table) MD5(file string) (sum [16]byte, ok bool) {
	sum, ok = t.md5[file]
	return sum, ok
}

// Lookup returns the source line of the instruction at addr: the row,
// statement or not, whose range [row, next row of its sequence) holds
// addr. Of several rows at one address the last one wins, as in
// debuggers. ok is false when no sequence covers addr or its row has no
// source line.
func (t *Table) Lookup(addr uint64) (file string, line int, ok bool) {
	if file, line, ok = t.LookupRead(addr); ok {
		return file, line, ok
	}
	if t.deferred != nil {
		return t.deferred.lookup(addr)
	}
	return "", 0, false
}

// LookupRead is Lookup among the units read: it does not run the units
// ReadOptions.DeferGoStd left out, which only the code a profile leaves
// out (a Go program's runtime and standard library) is in.
func (t *Table) LookupRead(addr uint64) (file string, line int, ok bool) {
	i := sort.Search(len(t.lookup), func(i int) bool { return t.lookup[i].addr > addr }) - 1
	if i >= 0 {
		if e := t.lookup[i]; !e.end && e.file != noFile && e.line != 0 && int(e.file) < len(t.Files) {
			return t.Files[e.file], int(e.line), true
		}
	}
	return "", 0, false
}

// goProcSuffix is a file every Go program's line table names.
const goProcSuffix = "/src/runtime/proc.go"

// GoRoot returns "$GOROOT/src/" (with a trailing slash) when the table
// belongs to a Go program, recognised by its runtime/proc.go, and "" for
// any other program.
func (t *Table) GoRoot() string {
	if t.goRoot != "" {
		return t.goRoot
	}
	for _, f := range t.Files {
		if strings.HasSuffix(f, goProcSuffix) {
			return strings.TrimSuffix(f, "runtime/proc.go")
		}
	}
	return ""
}

// sortIfNot sorts s by cmp: in one pass when it already is, and by
// merging its sorted runs when it has few (a line table's sequences, 25 in
// a Go program's 80,000 entries); anything else takes a full sort.
func sortIfNot[E any](s []E, cmp func(x, y E) int) {
	if slices.IsSortedFunc(s, cmp) {
		return
	}
	var runs []int // the start of each run, then len(s)
	runs = append(runs, 0)
	for i := 1; i < len(s); i++ {
		if cmp(s[i-1], s[i]) > 0 {
			runs = append(runs, i)
		}
	}
	runs = append(runs, len(s))
	if len(runs)-1 > 1+len(s)/64 {
		slices.SortFunc(s, cmp)
		return
	}
	// Merge neighbouring runs pairwise until one is left; stable, as
	// the earlier run wins ties.
	buf := make([]E, len(s))
	src, dst := s, buf
	for len(runs) > 2 {
		next := []int{0}
		for k := 0; k+1 < len(runs); k += 2 {
			lo, mid := runs[k], runs[k+1]
			hi := mid
			if k+2 < len(runs) {
				hi = runs[k+2]
			}
			i, j, o := lo, mid, lo
			for i < mid && j < hi {
				if cmp(src[j], src[i]) < 0 {
					dst[o] = src[j]
					j++
				} else {
					dst[o] = src[i]
					i++
				}
				o++
			}
			o += copy(dst[o:], src[i:mid])
			copy(dst[o:], src[j:hi])
			next = append(next, hi)
		}
		runs = next
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}
