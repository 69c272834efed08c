package linemodel

import "github.com/patchprof/patchprof/linecount"

// A FuncLines is the count of each line of one modelled function, in its
// own code only: one instance of a C++ template, whose lines its other
// instances share.
type FuncLines struct {
	// Func is the function (index into Inputs.Sym.Funcs).
	Func int
	// Lines are its lines the report shows (indexes into Model.Lines), in
	// the order the model first saw them, with their counts and whether
	// one of the function's blocks on the line never ran.
	Lines      []int32
	Counts     []uint64
	Unexecuted []bool
}

// Funcs returns the functions the model derives lines for (indexes into
// Inputs.Sym.Funcs), in the order of their graphs.
func (m *Model) Funcs() []int {
	if m == nil {
		return nil
	}
	out := make([]int, 0, len(m.funcs))
	for _, mf := range m.funcs {
		out = append(out, m.graphs[mf.graph].Func)
	}
	return out
}

// FuncCounts returns, for each modelled function in funcs (by index into
// Inputs.Sym.Funcs), the counts of its lines from its own blocks and arcs
// alone, gcov's rule applied to that function as if it were the only one
// (gcov counts the functions of a group, a template's instances, so, and
// sums them for the line it shows first). The count slices and fault are
// those of Counts.
func (m *Model) FuncCounts(funcs map[int]bool, blockCounts, edgeCounts, arrivals []uint64, entries map[int][]uint64, fault *Fault) []FuncLines {
	if m == nil || len(funcs) == 0 {
		return nil
	}
	rc := runCounts{blocks: blockCounts, edges: edgeCounts, arrivals: arrivals, entries: entries}
	var out []FuncLines
	for _, mf := range m.funcs {
		fi := m.graphs[mf.graph].Func
		if !funcs[fi] {
			continue
		}
		f := m.flowOf(mf, rc, fault)
		r := linecount.Lines([]linecount.Func{f}, len(m.keys))
		fl := FuncLines{Func: fi}
		seen := make(map[int32]bool)
		for _, b := range f.Blocks {
			for _, k := range b.Lines {
				if k < 0 || int(k) >= len(m.keys) || seen[k] || m.report[k] < 0 {
					continue
				}
				seen[k] = true
				fl.Lines = append(fl.Lines, m.report[k])
				fl.Counts = append(fl.Counts, r.Counts[k])
				fl.Unexecuted = append(fl.Unexecuted, r.Unexecuted[k])
			}
		}
		out = append(out, fl)
	}
	return out
}
