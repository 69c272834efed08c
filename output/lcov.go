package output

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// WriteLCOV writes p to w as an lcov tracefile, the text format of lcov's
// geninfo(1) that genhtml, lcov --summary and most coverage services read.
//
// The tracefile has one test, with an empty name (`TN:`), and one record
// per source file, in path order. A file gets a record when p.Lines or
// p.Functions names it. A record is
//
//	SF:<absolute path>
//	FN:<line>,<name>        one per function whose entry is in the file
//	FNDA:<count>,<name>     one per function, in the same order
//	FNF:<functions>
//	FNH:<functions with count > 0>
//	DA:<line>,<count>       one per counted line, in line order
//	LF:<lines>
//	LH:<lines with count > 0>
//	end_of_record
//
// Functions come in line order, then by name and address. All FN lines
// precede the FNDA lines, as geninfo writes them. FN, FNDA, FNF and FNH
// appear only for files with functions, DA, LF and LH only for files with
// counted lines, so a "funcs" profile gives records without line data.
// Functions whose File is empty (DWARF did not know where their entry is)
// belong to no record and are left out; a function with a file but no
// line is written with line 0. The output depends only on p, not on the
// order of its slices, and p is not modified.
func WriteLCOV(w io.Writer, p *profile.Profile) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "TN:\n")
	for _, f := range exportFiles(p) {
		fmt.Fprintf(bw, "SF:%s\n", escapeControl(f.name))
		if len(f.funcs) > 0 {
			hit := 0
			for _, fn := range f.funcs {
				fmt.Fprintf(bw, "FN:%d,%s\n", fn.Line, escapeControl(fn.Name))
			}
			for _, fn := range f.funcs {
				fmt.Fprintf(bw, "FNDA:%d,%s\n", fn.Count, escapeControl(fn.Name))
				if fn.Count > 0 {
					hit++
				}
			}
			fmt.Fprintf(bw, "FNF:%d\nFNH:%d\n", len(f.funcs), hit)
		}
		if len(f.lines) > 0 {
			hit := 0
			for _, l := range f.lines {
				fmt.Fprintf(bw, "DA:%d,%d\n", l.Line, l.Count)
				if l.Count > 0 {
					hit++
				}
			}
			fmt.Fprintf(bw, "LF:%d\nLH:%d\n", len(f.lines), hit)
			writeLCOVBranches(bw, f.branches, f.lines) // --blocks (branches.go)
		}
		fmt.Fprintf(bw, "end_of_record\n")
	}
	return bw.Flush()
}

// An exportFile holds the counts of p that belong to one source file, sorted:
// lines by number, functions by entry line, name and address.
type exportFile struct {
	name  string
	lines []profile.Line
	funcs []profile.Function
	// branches are the file's branch outcomes (--blocks), by line and
	// address (branches.go).
	branches []profile.Branch
	// calls are the file's calls with their returns (--blocks), by line
	// and address.
	calls []profile.Call
	// groups are the file's template instances, by entry line
	// (instances.go).
	groups []instanceGroup
}

// exportFiles groups the lines and functions of p by file, in path order.
// Functions without a file are left out. The file-based exports know no
// modules: when one source file was compiled into several modules (a
// header's inline function, a file linked into both a program and its
// library), its entries are summed by file and line, and its functions by
// file, line and name, whichever module they came from. p is not modified.
func exportFiles(p *profile.Profile) []*exportFile {
	byName := make(map[string]*exportFile)
	get := func(name string) *exportFile {
		f := byName[name]
		if f == nil {
			f = &exportFile{name: name}
			byName[name] = f
		}
		return f
	}
	type lineKey struct {
		file string
		line int
	}
	type funcKey struct {
		file, name string
		line       int
	}
	lineAt := make(map[lineKey]int) // index in its file's lines
	funcAt := make(map[funcKey]int)
	for _, l := range p.Lines {
		f := get(l.File)
		k := lineKey{l.File, l.Line}
		if i, ok := lineAt[k]; ok {
			f.lines[i].Count = profile.SumCounts(f.lines[i].Count, l.Count)
			f.lines[i].Samples += l.Samples
			f.lines[i].TimeNS += l.TimeNS
			continue
		}
		lineAt[k] = len(f.lines)
		l.Module = ""
		f.lines = append(f.lines, l)
	}
	for _, fn := range p.Functions {
		if fn.File == "" {
			continue
		}
		f := get(fn.File)
		k := funcKey{fn.File, fn.Name, fn.Line}
		if i, ok := funcAt[k]; ok {
			g := &f.funcs[i]
			g.Count = profile.SumCounts(g.Count, fn.Count)
			if fn.Address < g.Address {
				g.Address = fn.Address // keep the order independent of p's
			}
			continue
		}
		funcAt[k] = len(f.funcs)
		fn.Module = ""
		f.funcs = append(f.funcs, fn)
	}
	attachBranches(p, byName)
	attachCalls(p, byName)
	attachInstances(p, byName)
	files := make([]*exportFile, 0, len(byName))
	for _, f := range byName {
		slices.SortStableFunc(f.lines, func(a, b profile.Line) int {
			return cmp.Compare(a.Line, b.Line)
		})
		slices.SortStableFunc(f.funcs, func(a, b profile.Function) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), strings.Compare(a.Name, b.Name),
				cmp.Compare(a.Address, b.Address))
		})
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b *exportFile) int { return strings.Compare(a.name, b.name) })
	return files
}
