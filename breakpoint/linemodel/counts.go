package linemodel

import (
	"slices"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/linecount"
)

// The line model's counts: the blocks and arcs of each modelled function,
// with the blocks of GCC's that have no code (latches, copies of clobbers,
// goto labels, empty cases), turned into linecount's terms after the run.

// Counts returns the count of every line of a plan whose lines begin
// with m.Lines: lineEntries are the entries counted at rows, per line
// (they are the counts of the lines the model does not derive), and the
// model's lines add what it derives from one run's block and arc counts:
// blockCounts per block and arrivals (at a block along none of its edges)
// per block, indexed from Graph.FirstBlock, edgeCounts per edge, indexed
// from Graph.FirstEdge; entries, for the dispatch blocks the model asks
// them of (Dispatches), the times the dispatch jumped through each entry
// of its table, by table-wide block index (nil when not counted). The
// result has len(lineEntries) lines. A non-nil
// fault is where the run ended in the middle of a block (see Fault): the
// lines after it get no credit for that last entry.
//
// unexecuted is true for a line one of whose blocks never ran (gcov's '*'),
// known only for the lines derived from blocks. unknown is true for a line
// whose count the run cannot tell (an empty case that shares its jump-table
// target with other values, when they ran, and whose entries were not
// counted): it has no count. m may be nil (no line was modelled).
func (m *Model) Counts(blockCounts, edgeCounts, arrivals, lineEntries []uint64, entries map[int][]uint64, fault *Fault) (counts []uint64, unexecuted, unknown []bool) {
	out := make([]uint64, len(lineEntries))
	copy(out, lineEntries)
	unexecuted = make([]bool, len(lineEntries))
	unknown = make([]bool, len(lineEntries))
	if m == nil || len(m.funcs) == 0 {
		return out, unexecuted, unknown
	}
	rc := runCounts{blocks: blockCounts, edges: edgeCounts, arrivals: arrivals, entries: entries}
	funcs := make([]linecount.Func, 0, len(m.funcs))
	for _, mf := range m.funcs {
		funcs = append(funcs, m.flowOf(mf, rc, fault))
	}
	r := linecount.Lines(funcs, len(m.keys))
	for k, c := range r.Counts {
		if i := m.report[k]; i >= 0 {
			out[i] += c
			unexecuted[i] = unexecuted[i] || r.Unexecuted[k]
		}
	}
	for _, mf := range m.funcs {
		for _, cg := range mf.cases {
			if cg.exact || m.groupCount(mf, cg, edgeCounts) == 0 || m.caseCounts(mf, cg, rc) != nil {
				continue
			}
			for _, k := range cg.keys {
				if i := m.report[k]; i >= 0 {
					unknown[i] = true
				}
			}
		}
	}
	return out, unexecuted, unknown
}

// runCounts are one run's block and arc counts, as Counts takes them.
type runCounts struct {
	blocks, edges, arrivals []uint64
	entries                 map[int][]uint64 // by table-wide block: per table entry
}

// caseCounts returns the count of each empty case of group cg (its
// perCase) from the entries its dispatch counted, nil when they were not.
func (m *Model) caseCounts(mf modelFunc, cg caseGroup, rc runCounts) []uint64 {
	if cg.perCase == nil {
		return nil
	}
	e := rc.entries[m.graphs[mf.graph].FirstBlock+cg.dispatch]
	if len(e) != cg.size {
		return nil
	}
	out := make([]uint64, len(cg.perCase))
	for k, ce := range cg.perCase {
		for _, i := range ce.idx {
			out[k] += e[i]
		}
	}
	return out
}

// groupCount returns how often control went along the jump-table arcs to
// where a group of empty cases points.
func (m *Model) groupCount(mf modelFunc, cg caseGroup, edgeCounts []uint64) uint64 {
	fg := m.graphs[mf.graph]
	var c uint64
	for _, k := range cg.edges {
		c += edgeCounts[fg.FirstEdge+k]
	}
	return c
}

// flowOf turns one modelled function's counts into linecount's terms: its
// blocks and arcs, then the blocks of GCC's that have no code.
func (m *Model) flowOf(mf modelFunc, rc runCounts, fault *Fault) linecount.Func {
	fg := m.graphs[mf.graph]
	g := fg.Graph
	f := blocksOf(mf, fg, rc)
	latched, finCount, labCount := arcsOf(&f, mf, fg, rc)
	for i, l := range mf.latches {
		f.Blocks = append(f.Blocks, linecount.Block{Lines: []int32{l.line}, Count: latched[i]})
		f.Arcs = append(f.Arcs, linecount.Arc{From: int32(len(g.Blocks) + i), To: int32(l.head), Count: latched[i]})
	}
	for i, fin := range mf.finallies {
		f.Blocks = append(f.Blocks, linecount.Block{Lines: []int32{fin.line}, Count: finCount[i]})
	}
	for i, lb := range mf.labels {
		f.Blocks = append(f.Blocks, linecount.Block{Lines: append([]int32(nil), lb.lines...), Count: labCount[i]})
	}
	// The empty cases no block carries: a block of their own, entered
	// from the dispatch as often as its arcs to where they point ran.
	// Counted per case (their entries), each case is a block of its own,
	// its lines taken from the block they shared.
	for _, cg := range mf.cases {
		if cc := m.caseCounts(mf, cg, rc); cc != nil {
			splitCases(&f, cg, cc, rc.entries[fg.FirstBlock+cg.dispatch])
			continue
		}
		if len(cg.extra) == 0 {
			continue
		}
		c := m.groupCount(mf, cg, rc.edges)
		f.Arcs = append(f.Arcs, linecount.Arc{From: int32(cg.dispatch), To: int32(len(f.Blocks)), Count: c})
		f.Blocks = append(f.Blocks, linecount.Block{Lines: append([]int32(nil), cg.extra...), Count: c})
	}
	if fault != nil && fault.Addr >= g.Addr && fault.Addr < g.End {
		cutAt(&f, g, mf, *fault)
	}
	for k := range f.Blocks {
		listLast(m.keys, f.Blocks[k].Lines)
	}
	return f
}

// blocksOf returns the blocks of one modelled function in linecount's
// terms, with the arcs into them from outside the function that count:
// at its entry and at landing pads.
func blocksOf(mf modelFunc, fg Graph, rc runCounts) linecount.Func {
	g := fg.Graph
	f := linecount.Func{Blocks: make([]linecount.Block, len(g.Blocks))}
	for b, bl := range g.Blocks {
		ls := make([]int32, 0, len(mf.blocks[b]))
		if !mf.skip[b] {
			for _, x := range mf.blocks[b] {
				ls = append(ls, x.line)
			}
		}
		f.Blocks[b] = linecount.Block{Lines: ls, Count: rc.blocks[fg.FirstBlock+b], Exceptional: bl.Landing}
		if a := rc.arrivals[fg.FirstBlock+b]; a > 0 && (b == 0 || bl.Start == fg.Entry || bl.Landing) {
			f.Arcs = append(f.Arcs, linecount.Arc{From: linecount.Outside, To: int32(b), Count: a})
		}
	}
	return f
}

// arcsOf adds the arcs of one modelled function to f, routed through the
// blocks of GCC's that have no code: it returns how often control went
// through each latch, copy of clobbers and goto label of mf, whose blocks
// (numbered after the function's own, in that order) the caller adds.
func arcsOf(f *linecount.Func, mf modelFunc, fg Graph, rc runCounts) (latched, finCount, labCount []uint64) {
	g := fg.Graph
	// An arc into a loop-closing jmp goes on to the jmp's target.
	through := func(to int) int {
		for hops := 0; to >= 0 && mf.skip[to] && hops < len(g.Blocks); hops++ {
			to = g.Succs(to)[0].To
		}
		return to
	}
	// An arc back to a latched loop's head (from the head or a block
	// after it) runs through the latch.
	latchOf := make(map[int]int32, len(mf.latches))
	latched = make([]uint64, len(mf.latches))
	for i, l := range mf.latches {
		latchOf[l.head] = int32(len(g.Blocks) + i)
	}
	// An arc out of a jump's block leaving a scope with clobbers runs
	// through its destination's copy of them.
	finOf := make(map[int]int)
	for i, fin := range mf.finallies {
		for _, b := range fin.froms {
			finOf[b] = i
		}
	}
	finCount = make([]uint64, len(mf.finallies))
	// An arc to a goto label's destination from above it or from a goto
	// naming it runs through the label's block.
	labOf := make(map[int]int32)
	labBase := len(g.Blocks) + len(mf.latches) + len(mf.finallies)
	for i, lb := range mf.labels {
		for _, k := range lb.edges {
			labOf[k] = int32(labBase + i)
		}
	}
	labCount = make([]uint64, len(mf.labels))
	for k, e := range g.Edges {
		if e.To < 0 || mf.skip[e.From] {
			continue
		}
		to := int32(through(e.To))
		if to < 0 {
			continue
		}
		c := rc.edges[fg.FirstEdge+k]
		if lb, ok := labOf[k]; ok {
			f.Arcs = append(f.Arcs, linecount.Arc{From: lb, To: to, Count: c})
			labCount[int(lb)-labBase] += c
			to = lb
		}
		if i, ok := finOf[e.From]; ok {
			fb := int32(len(g.Blocks) + len(mf.latches) + i)
			f.Arcs = append(f.Arcs, linecount.Arc{From: int32(e.From), To: fb, Count: c}, linecount.Arc{From: fb, To: to, Count: c})
			finCount[i] += c
			continue
		}
		if _, ok := labOf[k]; ok {
			f.Arcs = append(f.Arcs, linecount.Arc{From: int32(e.From), To: to, Count: c})
			continue
		}
		if l, ok := latchOf[int(to)]; ok && g.Blocks[e.From].Start >= g.Blocks[to].Start &&
			(mf.latches[int(l)-len(g.Blocks)].outer == nil || mf.latches[int(l)-len(g.Blocks)].outer[e.From]) {
			f.Arcs = append(f.Arcs, linecount.Arc{From: int32(e.From), To: l, Count: c})
			latched[int(l)-len(g.Blocks)] += c
			continue
		}
		f.Arcs = append(f.Arcs, linecount.Arc{From: int32(e.From), To: to, Count: c})
	}
	return latched, finCount, labCount
}

// A Fault is where a run ended: the instruction at Addr, which it had
// begun (Entered: the instruction faulted) or not (a signal found the
// thread before it).
type Fault struct {
	Addr    uint64
	Entered bool
}

// cutAt splits the block holding the instruction the run ended at in two:
// the lines up to it keep the block's count, the lines after it lose the
// entry that never got there. The line that begins at an instruction not
// begun is one of those; at a block's first instruction not begun, the
// block's count does not hold that entry, and nothing is cut.
func cutAt(f *linecount.Func, g *cfg.Graph, mf modelFunc, at Fault) {
	pc := at.Addr
	b, ok := g.BlockAt(pc)
	if !ok || mf.skip[b] || f.Blocks[b].Count == 0 || !at.Entered && pc == g.Blocks[b].Start {
		return
	}
	var before, after []int32
	for _, x := range mf.blocks[b] {
		if x.addr < pc || x.addr == pc && at.Entered {
			before = append(before, x.line)
		} else {
			after = append(after, x.line)
		}
	}
	if len(after) == 0 {
		return
	}
	n := int32(len(f.Blocks))
	c := f.Blocks[b].Count
	f.Blocks[b].Lines = before
	f.Blocks = append(f.Blocks, linecount.Block{Lines: after, Count: c - 1})
	for k := range f.Arcs {
		if f.Arcs[k].From == int32(b) {
			f.Arcs[k].From = n
		}
	}
	f.Arcs = append(f.Arcs, linecount.Arc{From: int32(b), To: n, Count: c - 1})
}

// splitCases gives each empty case of group cg a block of its own in f,
// entered from the dispatch as often as its entries ran (cc, per case;
// e per entry), and takes its lines off the blocks that carried them. The
// entries' arcs to the block they shared go to the case's block instead:
// the default's own block loses them, the switch's end gets them from
// the case's block, its break.
func splitCases(f *linecount.Func, cg caseGroup, cc, e []uint64) {
	own := map[int32]bool{}
	for _, ce := range cg.perCase {
		for _, k := range ce.keys {
			own[k] = true
		}
	}
	for b := range f.Blocks {
		ls := f.Blocks[b].Lines
		if !slices.ContainsFunc(ls, func(k int32) bool { return own[k] }) {
			continue
		}
		f.Blocks[b].Lines = slices.DeleteFunc(slices.Clone(ls), func(k int32) bool { return own[k] })
	}
	d := int32(cg.dispatch)
	for k, ce := range cg.perCase {
		c := int32(len(f.Blocks))
		f.Arcs = append(f.Arcs, linecount.Arc{From: d, To: c, Count: cc[k]})
		f.Blocks = append(f.Blocks, linecount.Block{Lines: append([]int32(nil), ce.keys...), Count: cc[k]})
		for j, i := range ce.idx {
			to, n := int32(ce.to[j]), e[i]
			a := slices.IndexFunc(f.Arcs, func(a linecount.Arc) bool { return a.From == d && a.To == to })
			if a < 0 || n == 0 {
				continue
			}
			f.Arcs[a].Count -= min(n, f.Arcs[a].Count)
			if ce.inside[j] {
				f.Blocks[to].Count -= min(n, f.Blocks[to].Count)
			} else {
				f.Arcs = append(f.Arcs, linecount.Arc{From: c, To: to, Count: n})
			}
		}
	}
}
