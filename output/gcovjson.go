package output

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/patchprof/patchprof/profile"
)

// GcovJSONFormatVersion is the format_version WriteGcovJSON writes: that of
// the intermediate format of gcov --json-format in GCC 9 to 13.
const GcovJSONFormatVersion = "1"

// gcovJSON is gcov's JSON intermediate format (gcov(1), "-j,
// --json-format"; GCC 12 gcov.cc, output_json_intermediate_file).
type gcovJSON struct {
	FormatVersion string         `json:"format_version"`
	GCCVersion    string         `json:"gcc_version"`
	Cwd           string         `json:"current_working_directory"`
	DataFile      string         `json:"data_file"`
	Files         []gcovJSONFile `json:"files"`
}

type gcovJSONFile struct {
	File      string             `json:"file"`
	Functions []gcovJSONFunction `json:"functions"`
	Lines     []gcovJSONLine     `json:"lines"`
}

type gcovJSONFunction struct {
	Name           string `json:"name"`
	DemangledName  string `json:"demangled_name"`
	StartLine      int    `json:"start_line"`
	StartColumn    int    `json:"start_column"`
	EndLine        int    `json:"end_line"`
	EndColumn      int    `json:"end_column"`
	Blocks         int    `json:"blocks"`
	BlocksExecuted int    `json:"blocks_executed"`
	ExecutionCount uint64 `json:"execution_count"`
}

type gcovJSONLine struct {
	LineNumber      int              `json:"line_number"`
	FunctionName    string           `json:"function_name,omitempty"`
	Count           uint64           `json:"count"`
	UnexecutedBlock bool             `json:"unexecuted_block"`
	Branches        []gcovJSONBranch `json:"branches"`
}

// A gcovJSONBranch is one outcome of a conditional jump, as gcov writes a
// branch arc: its count, whether it is the fall-through, and whether it is
// an exception edge (never, here).
type gcovJSONBranch struct {
	Count       uint64 `json:"count"`
	Throw       bool   `json:"throw"`
	Fallthrough bool   `json:"fallthrough"`
}

// GcovJSONOptions control WriteGcovJSON.
type GcovJSONOptions struct {
	// Cwd is written as current_working_directory.
	Cwd string
}

// WriteGcovJSON writes p to w in gcov's JSON intermediate format, gzipped,
// as `gcov --json-format` writes a .gcov.json.gz file (GCC 9 to 13,
// format_version "1"). The document is one object:
//
//	{"format_version": "1", "gcc_version": "", "current_working_directory": CWD,
//	 "data_file": EXECUTABLE, "files": [{"file": PATH,
//	   "functions": [{"name", "demangled_name", "start_line", "start_column",
//	                  "end_line", "end_column", "blocks", "blocks_executed",
//	                  "execution_count"}],
//	   "lines": [{"line_number", "function_name", "count",
//	              "unexecuted_block", "branches": []}]}]}
//
// gcov writes one document per object file, naming its .gcda in data_file;
// here one document holds every source file of the profile, in path order,
// and data_file is the profiled executable. gcc_version is empty: no
// compiler wrote the counts. A file gets an entry when p.Lines or
// p.Functions names it, as in WriteLCOV; entries of one file from several
// modules are summed (see exportFiles).
//
// Lines are those with a count, in line order; unexecuted_block is true
// when the count is 0 or one of the line's blocks never ran
// (Line.UnexecutedBlock, known for lines derived from blocks),
// and function_name is the function whose entry line is the closest at or
// above the line in the same file, left out when no function is known.
// Functions are sorted by entry line, then name: start_line is the entry
// line, end_line the last counted line before the next function's entry
// (the entry line when there is none), columns are 0 (unknown; gcov's are
// 1-based), and blocks and blocks_executed are the function's block counts
// when blocks were counted (--blocks), else 0. demangled_name is
// DisplayName of the name. A line's branches are, for each conditional jump
// on it in address order, the taken outcome then the fall-through
// ("fallthrough": true), with their counts; empty without --blocks.
//
// The instances of a C++ template (Profile.Instances, grouped by entry
// line as in WriteGcov) are written as gcov writes a group: no entry for
// the summed lines, but, before the entries of the group's entry line,
// each instance's lines in turn (by entry address, highest first), with
// function_name the instance's symbol name and its own counts and
// branches; an instance's function entry takes its name as the instance
// has it (a constructor's base-object symbol, as gcov names it) and its
// end_line.
func WriteGcovJSON(w io.Writer, p *profile.Profile, opt GcovJSONOptions) error {
	if p == nil {
		return ErrNilProfile
	}
	doc := gcovJSON{
		FormatVersion: GcovJSONFormatVersion,
		Cwd:           opt.Cwd,
		DataFile:      p.Executable,
		Files:         []gcovJSONFile{},
	}
	for _, f := range exportFiles(p) {
		doc.Files = append(doc.Files, gcovJSONFileOf(f))
	}
	zw := gzip.NewWriter(w)
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("gcov JSON export: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("gcov JSON export: %w", err)
	}
	return nil
}

// gcovJSONFileOf builds the entry of one source file.
func gcovJSONFileOf(f *exportFile) gcovJSONFile {
	out := gcovJSONFile{File: f.name, Functions: []gcovJSONFunction{}, Lines: []gcovJSONLine{}}
	var entries []profile.Function // with a line, in line order
	for _, fn := range f.funcs {
		if fn.Line >= 1 {
			entries = append(entries, fn)
		}
	}
	// owner returns the function whose entry is closest at or above line.
	owner := func(line int) string {
		i := sort.Search(len(entries), func(i int) bool { return entries[i].Line > line })
		if i == 0 {
			return ""
		}
		return entries[i-1].Name
	}
	for _, fn := range f.funcs {
		end := fn.Line
		next := -1 // entry line of the next function below, if any
		for _, g := range entries {
			if g.Line > fn.Line {
				next = g.Line
				break
			}
		}
		for _, l := range f.lines {
			if l.Line >= fn.Line && (next < 0 || l.Line < next) {
				end = max(end, l.Line)
			}
		}
		name := fn.Name
		if in, ok := instanceOf(f.groups, fn); ok {
			name, end = in.Function, in.EndLine // gcov's name, and its end
		}
		out.Functions = append(out.Functions, gcovJSONFunction{
			Name:           name,
			DemangledName:  DisplayName(name),
			StartLine:      fn.Line,
			EndLine:        end,
			Blocks:         fn.Blocks,
			BlocksExecuted: fn.BlocksExecuted,
			ExecutionCount: fn.Count,
		})
	}
	next := 0 // the first group not written yet
	groups := func(below int) {
		for ; next < len(f.groups) && f.groups[next].line <= below; next++ {
			out.Lines = append(out.Lines, gcovJSONGroupLines(f, &f.groups[next])...)
		}
	}
	for _, l := range f.lines {
		groups(l.Line)
		if g, ok := groupAt(f.groups, l.Line); ok && g.has(l.Line) {
			continue // gcov writes an instance's lines, not their sum
		}
		_, bs, _, _ := splitArcs(f.groups, l.Line, nil, branchesOn(f.branches, l.Line))
		out.Lines = append(out.Lines, gcovJSONLine{
			LineNumber:      l.Line,
			FunctionName:    owner(l.Line),
			Count:           l.Count,
			UnexecutedBlock: l.Count == 0 || l.UnexecutedBlock,
			Branches:        gcovJSONBranches(bs),
		})
	}
	groups(math.MaxInt)
	return out
}

// gcovJSONGroupLines returns the line entries of the instances of group
// g, as gcov writes a group's (output_json_intermediate_file): before the
// lines of its entry line, each instance's lines in turn, named after it,
// with its own counts and branches.
func gcovJSONGroupLines(f *exportFile, g *instanceGroup) []gcovJSONLine {
	var out []gcovJSONLine
	for k, in := range g.insts {
		for _, l := range in.Lines {
			_, _, _, bs := splitArcs(f.groups, l.Line, nil, branchesOn(f.branches, l.Line))
			out = append(out, gcovJSONLine{
				LineNumber:      l.Line,
				FunctionName:    in.Function,
				Count:           l.Count,
				UnexecutedBlock: l.Count == 0 || l.UnexecutedBlock,
				Branches:        gcovJSONBranches(bs[k]),
			})
		}
	}
	return out
}

// gcovJSONBranches returns the outcomes of the conditional jumps bs, in
// their order: each one's taken outcome, then its fall-through.
func gcovJSONBranches(bs []profile.Branch) []gcovJSONBranch {
	out := []gcovJSONBranch{}
	for _, b := range bs {
		for _, a := range gcovArcs(b) {
			out = append(out, gcovJSONBranch{Count: a.n, Fallthrough: a.fall})
		}
	}
	return out
}
