package output

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// A GcovNameError reports that two source files of a profile would be
// written to the same .gcov file even after mangling their names.
type GcovNameError struct {
	Name        string // the .gcov file name
	File, Other string // the two source paths
}

// Error names both sources and the file they clash on.
func (e *GcovNameError) Error() string {
	return fmt.Sprintf("gcov export: %s and %s both map to %s: rename one of the sources", e.File, e.Other, e.Name)
}

// WriteGcov writes p in gcov's text format, one file per source file into
// dir (which must exist), and returns the paths of the files written, in
// source path order. It reads the sources with readFile; nil means
// os.ReadFile.
//
// A source file gets a .gcov file when p.Lines or p.Functions names it. The
// file is named after the base name of the source plus ".gcov" (x.c.gcov),
// as gcov names it. When sources share a base name, each of them is named
// after its whole path mangled as gcov --preserve-paths does: '/' becomes
// '#', a ".." component '^', and "." components are dropped
// (#home#ann#src#x.c.gcov).
//
// The format is that of gcov -b -c (GCC 12); call and branch lines come
// with block counts (--blocks, see writeGcovArcs):
//
//	        -:    0:Source:/home/ann/src/x.c
//	        -:    0:Graph:
//	        -:    0:Data:
//	        -:    0:Runs:1
//	        -:    1:#include <stdio.h>
//	function main called 1 returned 100% blocks executed 80%
//	        1:    3:int main(void)
//	    #####:    7:	unused();
//
// Every source line gets a row: the count right-aligned in 9 columns ("-"
// for a line without a count, "#####" for a counted line that never ran,
// a '*' after a count when one of the line's blocks never ran),
// ':', the line number right-aligned in 5 columns, ':', and the text of the
// line as it is in the file, tabs and all. Graph and Data are empty because
// there are no .gcno or .gcda files; Runs is 1, the one monitored run.
// Before the row of a function's entry line comes
// `function NAME called N returned R% blocks executed B%`, with the
// returns and blocks patchprof counted (Function.Returns, Blocks and
// BlocksExecuted; 0%, what gcov prints when it has no data, for a function
// whose blocks were not counted; in a lines-only profile such a function
// gets no row, as gcov without -b writes none). The blocks are the machine code's, which
// are close to but not always GCC's own, so B% can differ from gcov's.
// Functions without a file or line get no such row.
//
// The instances of a C++ template (Profile.Instances: functions whose
// entries share a line) are shown as gcov shows them: their lines' rows
// carry the sum over the instances, without function, call or branch
// rows; after the row of the group's last line, each instance (by entry
// address, highest first: gcov's order for g++ -O0) gets a
// "------------------" rule, its symbol name and ':', its function row,
// and a row for each line from its entry to its end with its own count,
// calls and branches; a last rule closes the group:
//
//	       10:    6:T biggest(T a, T b)
//	        -:   11:}
//	------------------
//	_Z7biggestIdET_S0_S0_:
//	function _Z7biggestIdET_S0_S0_ called 3 returned 100% blocks executed 100%
//	        3:    6:T biggest(T a, T b)
//	        -:   11:}
//	------------------
//	_Z7biggestIiET_S0_S0_:
//	...
//	------------------
//
// When a source cannot be read, or is shorter than the counts imply (it
// changed since the build), rows are still written for the counted lines
// and function entries beyond its end, with gcov's text for a line past the
// end of the source, "/*EOF*/"; no row is written for the other lines
// there, so the output stays proportional to the profile even when its
// line numbers are huge.
func WriteGcov(dir string, p *profile.Profile, readFile func(string) ([]byte, error)) ([]string, error) {
	if readFile == nil {
		readFile = os.ReadFile
	}
	files := exportFiles(p)
	names := gcovNames(files)
	seen := make(map[string]string, len(files))
	for _, f := range files {
		if other, ok := seen[names[f.name]]; ok {
			return nil, &GcovNameError{Name: names[f.name], File: other, Other: f.name}
		}
		seen[names[f.name]] = f.name
	}
	written := make([]string, 0, len(files))
	for _, f := range files {
		if !p.HasFuncs() {
			// A lines-only profile knows a function's calls from its
			// entry's count, and its returns and blocks only when its
			// flow was counted. gcov without -b writes no function rows;
			// neither does this for a function without them, rather than
			// claim it never returned.
			f.funcs = slices.DeleteFunc(f.funcs, func(fn profile.Function) bool { return fn.Blocks == 0 })
		}
		out := filepath.Join(dir, names[f.name])
		var text []byte
		if b, err := readFile(f.name); err == nil {
			// A missing or unreadable source is not an error: the counts
			// are still worth exporting, with empty text.
			text = b
		}
		if err := writeGcovFile(out, f, text); err != nil {
			return written, err
		}
		written = append(written, out)
	}
	return written, nil
}

// writeGcovFile writes the .gcov text of f, whose source is text, to name,
// replacing an old file only once the new one is complete
// (profile.ReplaceFile).
func writeGcovFile(name string, f *exportFile, text []byte) error {
	err := profile.ReplaceFile(name, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		writeGcov(bw, f, text)
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("gcov export: %w", err)
	}
	return nil
}

// writeGcov renders f over its source text in gcov's format.
func writeGcov(w *bufio.Writer, f *exportFile, text []byte) {
	var src [][]byte
	if len(text) > 0 {
		// gcov's read_line keeps everything but the '\n', including a CR.
		src = bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
	}
	counts := make(map[int]uint64, len(f.lines))
	partly := make(map[int]bool)
	var beyond []int // counted lines past the source's end (all of them without a source)
	for _, l := range f.lines {
		counts[l.Line] = l.Count
		partly[l.Line] = l.UnexecutedBlock
		if l.Line > len(src) {
			beyond = append(beyond, l.Line)
		}
	}
	funcs := make(map[int][]profile.Function)
	for _, fn := range f.funcs {
		if fn.Line >= 1 && !inGroup(f.groups, fn) { // an instance's row is in its block

			funcs[fn.Line] = append(funcs[fn.Line], fn)
			if fn.Line > len(src) {
				beyond = append(beyond, fn.Line)
			}
		}
	}
	for _, g := range f.groups {
		if g.end > len(src) {
			beyond = append(beyond, g.end)
		}
	}
	slices.Sort(beyond)
	beyond = slices.Compact(beyond)
	fmt.Fprintf(w, "%9s:%5d:Source:%s\n", "-", 0, escapeControl(f.name))
	fmt.Fprintf(w, "%9s:%5d:Graph:\n", "-", 0)
	fmt.Fprintf(w, "%9s:%5d:Data:\n", "-", 0)
	fmt.Fprintf(w, "%9s:%5d:Runs:1\n", "-", 0)
	row := func(line int, text []byte) {
		for _, fn := range funcs[line] { // already in line, name, address order
			fmt.Fprintf(w, "function %s called %d returned %s blocks executed %s\n", escapeControl(fn.Name), fn.Count, gcovReturned(fn), gcovBlocksExecuted(fn))
		}
		count := "-"
		if c, ok := counts[line]; ok {
			count = gcovCount(c, partly[line])
		}
		fmt.Fprintf(w, "%9s:%5d:%s\n", count, line, text)
		calls, branches, _, _ := splitArcs(f.groups, line, callsOn(f.calls, line), branchesOn(f.branches, line))
		writeGcovArcs(w, calls, branches) // --blocks (branches.go)
		for _, g := range f.groups {
			if g.end == line {
				writeGcovGroup(w, f, &g, src)
			}
		}
	}
	for i, text := range src {
		row(i+1, text)
	}
	// Past the source's end only the lines with counts get a row, so that
	// what is written is bounded by the profile, whatever its line numbers.
	for _, line := range beyond {
		row(line, []byte(gcovEOF))
	}
}

// writeGcovGroup writes the instances of group g apart, after the summed
// rows of its lines, as gcov does (gcov.cc, output_lines): for each, a
// "------------------" rule, its symbol name and ':', its function row when
// p counted functions, then a row for every line from its entry to its
// end, with its own count and its own calls and branches; one more rule
// closes the group.
func writeGcovGroup(w *bufio.Writer, f *exportFile, g *instanceGroup, src [][]byte) {
	const rule = "------------------\n"
	for k, in := range g.insts {
		w.WriteString(rule)
		fmt.Fprintf(w, "%s:\n", escapeControl(in.Function))
		for _, fn := range f.funcs {
			if fn.Address == in.Address && fn.Line == in.Line {
				fmt.Fprintf(w, "function %s called %d returned %s blocks executed %s\n", escapeControl(in.Function), fn.Count, gcovReturned(fn), gcovBlocksExecuted(fn))
			}
		}
		for line := in.Line; line <= in.EndLine; line++ {
			text := []byte(gcovEOF)
			if line <= len(src) {
				text = src[line-1]
			}
			count := "-"
			if l, ok := in.Count(line); ok {
				count = gcovCount(l.Count, l.UnexecutedBlock)
			}
			fmt.Fprintf(w, "%9s:%5d:%s\n", count, line, text)
			_, _, calls, branches := splitArcs(f.groups, line, callsOn(f.calls, line), branchesOn(f.branches, line))
			writeGcovArcs(w, calls[k], branches[k])
		}
	}
	w.WriteString(rule)
}

// gcovCount is the count cell of a counted line: "#####" when it never
// ran, else the count, with '*' when one of its blocks never ran.
func gcovCount(c uint64, partly bool) string {
	switch {
	case c == 0:
		return "#####"
	case partly:
		return fmt.Sprint(c) + "*"
	}
	return fmt.Sprint(c)
}

// gcovEOF is the text gcov gives a row past the end of the source it read
// (gcov.c, output_lines).
const gcovEOF = "/*EOF*/"

// gcovNames returns the .gcov file name of each file: its base name plus
// ".gcov", or, for base names shared by several files, the mangled path.
func gcovNames(files []*exportFile) map[string]string {
	byBase := make(map[string]int)
	for _, f := range files {
		byBase[path.Base(f.name)]++
	}
	names := make(map[string]string, len(files))
	for _, f := range files {
		base := path.Base(f.name)
		if byBase[base] > 1 {
			base = mangleGcovPath(f.name)
		}
		names[f.name] = base + ".gcov"
	}
	return names
}

// mangleGcovPath mangles a path the way gcov --preserve-paths does
// (gcov.c, mangle_path): '/' becomes '#', a ".." component becomes '^',
// and "." components are dropped.
func mangleGcovPath(p string) string {
	parts := strings.Split(p, "/")
	kept := parts[:0]
	for i, c := range parts {
		switch {
		case c == "." && i < len(parts)-1:
			continue
		case c == "..":
			c = "^"
		}
		kept = append(kept, c)
	}
	return strings.Join(kept, "#")
}
