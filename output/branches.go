package output

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// Branch outcomes (--blocks): each conditional branch whose jump is on a
// line gives two outcomes, numbered on that line in address order as gcov -b
// numbers its arcs: branches 2k and 2k+1 are the k-th jump's, in gcov's
// order (gcovArcs). A percentage is of the times the jump ran.

// branchKey names a line of one module's listing.
type branchKey struct {
	file string
	line int
}

// branchIndex returns the branches of p in the module of lines (one
// module's listing) by file and line, in address order.
func branchIndex(p *profile.Profile, lines []profile.Line) map[branchKey][]profile.Branch {
	if len(p.Branches) == 0 || len(lines) == 0 {
		return nil
	}
	module := lines[0].Module
	idx := make(map[branchKey][]profile.Branch)
	for _, b := range sortedBranches(p.Branches) {
		if b.Module == module {
			k := branchKey{b.File, b.Line}
			idx[k] = append(idx[k], b)
		}
	}
	return idx
}

// sortedBranches returns bs by module, file, line and address, leaving bs
// untouched.
func sortedBranches(bs []profile.Branch) []profile.Branch {
	out := slices.Clone(bs)
	slices.SortStableFunc(out, func(a, b profile.Branch) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), strings.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line), cmp.Compare(a.Address, b.Address))
	})
	return out
}

// attachBranches gives each export file its branches, summed by file, line
// and address over the modules (exportFiles sums lines the same way).
func attachBranches(p *profile.Profile, files map[string]*exportFile) {
	attachFiled(sortedBranches(p.Branches), files,
		func(f *exportFile) *[]profile.Branch { return &f.branches },
		func(b profile.Branch) (string, int, profile.Address) { return b.File, b.Line, b.Address },
		func(dst *profile.Branch, src profile.Branch) {
			dst.Taken, dst.NotTaken = profile.SumCounts(dst.Taken, src.Taken), profile.SumCounts(dst.NotTaken, src.NotTaken)
		},
		func(b *profile.Branch) { b.Module = "" })
}

// attachFiled gives each export file the items filed under its lines
// (branches, calls): summed by line and address over the modules with
// sum, their module cleared, sorted by line and address. slot is a file's
// list, at an item's file, line and address.
func attachFiled[T any](items []T, files map[string]*exportFile, slot func(*exportFile) *[]T,
	at func(T) (string, int, profile.Address), sum func(dst *T, src T), clearModule func(*T)) {
	type key struct {
		line int
		addr profile.Address
	}
	index := map[string]map[key]int{}
	for _, it := range items {
		file, line, addr := at(it)
		f := files[file]
		if f == nil {
			continue
		}
		if index[file] == nil {
			index[file] = map[key]int{}
		}
		list := slot(f)
		k := key{line, addr}
		if i, ok := index[file][k]; ok {
			sum(&(*list)[i], it)
			continue
		}
		index[file][k] = len(*list)
		clearModule(&it)
		*list = append(*list, it)
	}
	for _, f := range files {
		slices.SortStableFunc(*slot(f), func(a, b T) int {
			_, la, aa := at(a)
			_, lb, ab := at(b)
			return cmp.Or(cmp.Compare(la, lb), cmp.Compare(aa, ab))
		})
	}
}

// A gcovArc is one outcome of a conditional branch, as gcov -b lists it:
// how often it was taken, and whether gcov marks it the fallthrough.
type gcovArc struct {
	n    uint64
	fall bool
}

// gcovArcs returns b's two outcomes in the order gcov lists a condition's
// arcs, which lcov, gcov-json and the listing keep too: the true arc
// first, the arc to the block that follows in GCC's own order marked as
// the fallthrough. A loop's bottom test (a backward jump) jumps when it
// holds, and its false arc falls through; for a forward jump the true arc
// is the one that falls through in GCC's order, the machine code's
// fall-through unless Branch.TrueFallthrough says otherwise. Where that
// inference is wrong the two come in the other order, with the same
// counts.
func gcovArcs(b profile.Branch) [2]gcovArc {
	arcs := [2]gcovArc{{b.Taken, false}, {b.NotTaken, true}} // a loop's bottom test
	if !b.Backward() {
		// The true arc first, marked as the fallthrough.
		if b.TrueFallthrough {
			arcs[0], arcs[1] = arcs[1], arcs[0]
		} else {
			arcs[0].fall, arcs[1].fall = true, false
		}
	}
	return arcs
}

// branchOutcomes returns the outcomes of bs as gcov -b words them: "taken
// 90%" (of the jump's executions), or "never executed".
func branchOutcomes(bs []profile.Branch) []string {
	var out []string
	for _, b := range bs {
		total := profile.SumCounts(b.Taken, b.NotTaken)
		for _, a := range gcovArcs(b) {
			if total == 0 {
				out = append(out, "never executed")
				continue
			}
			out = append(out, "taken "+percent(a.n, total))
		}
	}
	return out
}

// percent formats n/total as gcov does: rounded to a whole percent, but
// never 0% for a count above 0 nor 100% for one below total.
func percent(n, total uint64) string {
	// n <= total; halve both until n*200 cannot overflow: the percentage
	// of counts this large does not depend on their low bits.
	sn, st := n, total
	for st > math.MaxUint64/256 {
		sn, st = sn>>1, st>>1
	}
	p := (sn*200 + st) / (2 * st)
	switch {
	case n > 0 && p == 0:
		p = 1
	case n < total && p == 100:
		p = 99
	}
	return strconv.FormatUint(p, 10) + "%"
}

// branchSuffix is what the listing prints after a line's source text: its
// branch outcomes, "  [branch 0 taken 90%, branch 1 taken 10%]".
func branchSuffix(idx map[branchKey][]profile.Branch, file string, line int) string {
	if len(idx) == 0 {
		return "" // without --blocks: no key of a listing's lines hashed
	}
	bs := idx[branchKey{file, line}]
	if len(bs) == 0 {
		return ""
	}
	var parts []string
	for k, o := range branchOutcomes(bs) {
		parts = append(parts, fmt.Sprintf("branch %d %s", k, o))
	}
	return "  [" + strings.Join(parts, ", ") + "]"
}

// blockSummary is what the function table prints after a function's
// location when its blocks were counted: "  blocks 12/13, 20 edges". The
// edges are said only when there are some: --lines counts blocks and keeps
// no edges (--blocks does), and "0 edges" read as a function without
// branches.
func blockSummary(f profile.Function) string {
	if f.Blocks == 0 {
		return ""
	}
	if f.Edges == 0 {
		return fmt.Sprintf("  blocks %d/%d", f.BlocksExecuted, f.Blocks)
	}
	return fmt.Sprintf("  blocks %d/%d, %d edges", f.BlocksExecuted, f.Blocks, f.Edges)
}

// gcovBlocksExecuted is the "blocks executed" percentage of gcov's
// function line.
func gcovBlocksExecuted(f profile.Function) string {
	return gcovPercent(uint64(f.BlocksExecuted), uint64(f.Blocks))
}

// gcovReturned is the "returned" percentage of gcov's function line: 0%
// when the returns were not counted.
func gcovReturned(f profile.Function) string {
	return gcovPercent(f.Returns, f.Count)
}

// gcovPercent formats top/bottom as gcov's function and summary lines do
// (gcov.cc, format_gcov with no decimals): a whole percentage, rounded,
// but at least 1% when top is not 0; 0% when bottom is 0.
func gcovPercent(top, bottom uint64) string {
	if bottom == 0 {
		return "0%"
	}
	ratio := 100 * float32(top) / float32(bottom)
	if ratio > 0 && ratio < 0.5 {
		ratio = 1
	}
	return strconv.FormatFloat(float64(ratio), 'f', 0, 32) + "%"
}

// writeGcovArcs writes a line's calls and branches as gcov -b -c does
// after the line, numbered together in address order: "call    0
// returned 1000", "branch  1 taken 9", "branch  2 taken 1 (fallthrough)",
// "branch  3 never executed"; a branch's two arcs in gcov's order
// (gcovArcs).
func writeGcovArcs(w io.Writer, calls []profile.Call, bs []profile.Branch) {
	k := 0
	for len(calls) > 0 || len(bs) > 0 {
		if len(calls) > 0 && (len(bs) == 0 || calls[0].Address < bs[0].Address) {
			c := calls[0]
			calls = calls[1:]
			if c.Count == 0 {
				fmt.Fprintf(w, "call   %2d never executed\n", k)
			} else {
				fmt.Fprintf(w, "call   %2d returned %d\n", k, c.Returned)
			}
			k++
			continue
		}
		b := bs[0]
		bs = bs[1:]
		for _, a := range gcovArcs(b) {
			switch {
			case b.Taken+b.NotTaken == 0:
				fmt.Fprintf(w, "branch %2d never executed\n", k)
			case a.fall:
				fmt.Fprintf(w, "branch %2d taken %d (fallthrough)\n", k, a.n)
			default:
				fmt.Fprintf(w, "branch %2d taken %d\n", k, a.n)
			}
			k++
		}
	}
}

// callsOn returns the calls of line in cs, which are sorted by line.
func callsOn(cs []profile.Call, line int) []profile.Call {
	i := sort.Search(len(cs), func(k int) bool { return cs[k].Line >= line })
	j := i
	for j < len(cs) && cs[j].Line == line {
		j++
	}
	return cs[i:j]
}

// attachCalls gives each export file its calls, summed by line and
// address over the modules, sorted by line and address.
func attachCalls(p *profile.Profile, files map[string]*exportFile) {
	attachFiled(p.Calls, files,
		func(f *exportFile) *[]profile.Call { return &f.calls },
		func(c profile.Call) (string, int, profile.Address) { return c.File, c.Line, c.Address },
		func(dst *profile.Call, src profile.Call) {
			dst.Count, dst.Returned = profile.SumCounts(dst.Count, src.Count), profile.SumCounts(dst.Returned, src.Returned)
		},
		func(c *profile.Call) { c.Module = "" })
}

// writeLCOVBranches writes a file's branch records as geninfo (lcov 1.16)
// writes them from a gcov build's data: one BRDA per outcome,
// BRDA:<line>,0,<outcome on the line>,<count>, the outcomes of a line
// numbered from 0 in gcov's order (gcovArcs), every count "-" on a line
// that never ran (lines, the file's) and a number on one that did, even for
// a jump that never ran; then BRF and BRH (outcomes found and taken at least
// once). Nothing for a file without branches. bs are sorted by line and
// address.
func writeLCOVBranches(w io.Writer, bs []profile.Branch, lines []profile.Line) {
	ran := map[int]bool{}
	for _, l := range lines {
		ran[l.Line] = ran[l.Line] || l.Count > 0
	}
	found, hit := 0, 0
	for k, b := range bs {
		o := 0
		for j := k - 1; j >= 0 && bs[j].Line == b.Line; j-- {
			o += 2
		}
		for _, a := range gcovArcs(b) {
			c := strconv.FormatUint(a.n, 10)
			if !ran[b.Line] {
				c = "-"
			}
			fmt.Fprintf(w, "BRDA:%d,0,%d,%s\n", b.Line, o, c)
			o++
			found++
			if a.n > 0 {
				hit++
			}
		}
	}
	if found > 0 {
		fmt.Fprintf(w, "BRF:%d\nBRH:%d\n", found, hit)
	}
}

// branchesOn returns the branches of line in bs, which are sorted by line,
// by binary search.
func branchesOn(bs []profile.Branch, line int) []profile.Branch {
	i := sort.Search(len(bs), func(k int) bool { return bs[k].Line >= line })
	j := i
	for j < len(bs) && bs[j].Line == line {
		j++
	}
	return bs[i:j]
}
