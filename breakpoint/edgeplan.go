package breakpoint

import (
	"maps"
	"slices"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/breakpoint/relocate"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

// An arcCounter is one arc counted in the target (jump.EdgeCount): the edge
// of graph graph, out of the block whose site is site, which displaces
// the whole block (length bytes) into its trampoline.
type arcCounter struct {
	site, graph, edge int
	taken             bool
	length            uint8
	table             uint64 // for a jump table's arc, its target's link-time address
	// short: the block is shorter than a jmp rel32 (`test %eax, %eax;
	// jne`, after a call): its site takes a short patch (planShort), a
	// jmp rel8 to a landing in a host block, and its trampoline runs the
	// whole block.
	short bool
}

// maxArcs bounds the arcs counted per function: each is a whole block in a
// trampoline; a function that needs more keeps its breakpoints.
const maxArcs = 8

// maxTableArcs bounds the arcs one jump table's dispatch counts: each is 19
// bytes of its trampoline, and 8 of its data.
const maxTableArcs = 4

// planArcs makes graph gi, whose edges do not all follow from its block
// counts, derivable by counting arcs: while some edges stay unknown, one
// of them that a trampoline can count is counted. It returns the arcs and
// the plan, or nil when some edge could not be.
func (p *Plan) planArcs(sym *symtab.File, gi int, fg FuncGraph) ([]arcCounter, *jump.DerivePlan) {
	g := fg.Graph
	if fg.Func < 0 || int(fg.Func) >= len(sym.Funcs) {
		return nil, nil
	}
	f := sym.Funcs[fg.Func]
	fcode, ok := sym.Code(f.Addr, int(f.Size))
	if !ok {
		return nil, nil
	}
	measured := make([]bool, len(g.Edges))
	fs := jump.NewFlow(g, measured)
	var arcs []arcCounter
	used := map[int]int{} // per site, its arcs
	for len(arcs) <= maxArcs {
		dp, unknown := fs.Solve(nil)
		if unknown == nil {
			return arcs, dp
		}
		// An arc whose block takes a jmp rel32 first: a short site's
		// needs a host block near it, which keepArcs may not find.
		found := false
		for pass := 0; pass < 2 && !found; pass++ {
			for _, v := range unknown {
				if v >= len(g.Edges) {
					continue
				}
				// A conditional jump's trampoline counts one arc; a jump
				// table's, a few (maxTableArcs).
				ac, ok := p.arcSite(g, fg, fcode, f.Addr, v)
				if ok && ac.short == (pass == 1) && (used[ac.site] == 0 || ac.table != 0 && used[ac.site] < maxTableArcs) {
					ac.graph = gi
					arcs = append(arcs, ac)
					used[ac.site]++
					measured[v] = true
					found = true
					break
				}
			}
		}
		if !found {
			return nil, nil
		}
	}
	return nil, nil
}

// arcSite reports whether edge k of g can be counted by the trampoline of
// the block it leaves: a conditional jump's arc, from a block site (not
// the function's entry) that can displace its whole block, with the flags
// dead where the block starts and where the arc goes (the counter update
// writes them). A conditional jump's block of 2 to 4 bytes, too short for
// a jmp rel32, is a short site's (arcCounter.short): at -O2 the test of a
// call's result often makes a block of its own (`test %eax, %eax; jne`),
// and two such blocks to the same two blocks leave an arc free.
func (p *Plan) arcSite(g *cfg.Graph, fg FuncGraph, fcode []byte, faddr uint64, k int) (arcCounter, bool) {
	t := p.Table
	e := g.Edges[k]
	if e.From < 0 || e.To < 0 {
		return arcCounter{}, false
	}
	bl := g.Blocks[e.From]
	table := bl.Term == cfg.TermTable && e.Kind == cfg.JumpTable
	cond := bl.Term == cfg.TermCond && (e.Kind == cfg.Fallthrough || e.Kind == cfg.Taken)
	if !table && !cond || bl.Start < fg.Entry || bl.Start >= fg.Tail || bl.Start < faddr {
		return arcCounter{}, false
	}
	i, ok := t.Index(bl.Start)
	n := bl.End - bl.Start
	short := n < jump.JmpLen
	if !ok || t.Kind(i)&KindBlock == 0 || t.IsEntry(i) || t.IsNotify(i) || t.IsRep(i) || n < 2 || n > jump.MaxHostLen || short && !cond {
		return arcCounter{}, false
	}
	if i+1 < len(t.addr) && t.addr[i+1] < bl.End {
		return arcCounter{}, false
	}
	off := bl.Start - faddr
	if off+n > uint64(len(fcode)) {
		return arcCounter{}, false
	}
	js, ok := jump.PlanRun(fcode[off:off+n], bl.Start, int(n), p.leaderOf(g))
	if !ok || js.Len != int(n) {
		return arcCounter{}, false
	}
	last := off + n - uint64(js.Insns[len(js.Insns)-1])
	form, _, err := relocate.Measure(fcode[last:], faddr+last)
	if err != nil {
		return arcCounter{}, false
	}
	if table {
		// The cmp before the jump writes the flags on every dispatch:
		// they must be dead at every target of the table. The check of
		// the jump itself is the trampoline's, when it is built.
		if form != relocate.FormTransfer || !jump.FlagsDead(fcode, faddr, bl.Start, 3) {
			return arcCounter{}, false
		}
		for _, o := range g.Succs(e.From) {
			if !jump.FlagsDead(fcode, faddr, o.Target, 3) {
				return arcCounter{}, false
			}
		}
		return arcCounter{site: i, edge: k, length: uint8(n), table: e.Target}, true
	}
	dest := bl.End
	if e.Kind == cfg.Taken {
		dest = e.Target
	}
	if form != relocate.FormCond || !jump.FlagsDead(fcode, faddr, bl.Start, 3) || !jump.FlagsDead(fcode, faddr, dest, 3) {
		return arcCounter{}, false
	}
	return arcCounter{site: i, edge: k, taken: e.Kind == cfg.Taken, length: uint8(n), short: short}, true
}

// ArcCounters returns how many arcs the in-process engine counts in the
// target (their counters follow the sites' in a slab).
func (t *Table) ArcCounters() int {
	if t.jump == nil {
		return 0
	}
	if t.jump.funcs != nil {
		return max(len(t.jump.arcs), t.jump.funcs.arcCap)
	}
	return len(t.jump.arcs)
}

// ArcsOf returns the arc counters site i's trampoline updates (indexes
// for ArcHits) and what each counts, with Counter left 0 and a jump
// table's target at its runtime address; none for most sites.
func (t *Table) ArcsOf(i int) (ks []int, ecs []jump.EdgeCount) {
	if t.jump == nil {
		return nil, nil
	}
	t.settle(i)
	for _, k := range t.jump.arcOf[i] {
		ac := t.jump.arcs[k]
		ec := jump.EdgeCount{Taken: ac.taken}
		if ac.table != 0 {
			ec.Table = ac.table + t.bias
		}
		ks, ecs = append(ks, k), append(ecs, ec)
	}
	return ks, ecs
}

// ArcServed records that arc counter k counts in the target: its site
// took its patch. An arc whose site kept its breakpoint was never
// counted, and its function's edges no longer follow (DeriveFlow).
func (t *Table) ArcServed(k int) { t.jump.arcServed[k] = true }

// keepArcs commits the arcs planned per graph once every site's jump is
// decided (reasons): an arc's site displaces its whole block; a short
// one's takes a short patch (planShort) to a host block of its function.
// A graph one of whose arc sites cannot take a jump is not derivable after
// all: its block and line sites keep their breakpoints. It returns how
// many short sites it planned.
func (p *Plan) keepArcs(sym *symtab.File, arcsOf map[int][]arcCounter, reasons []string) (short int) {
	t := p.Table
	short = p.commitArcs(sym, arcsOf, reasons)
	t.cnt.ArcHits = make([]uint64, len(t.jump.arcs))
	t.jump.arcServed = make([]bool, len(t.jump.arcs))
	return short
}

// commitArcs is keepArcs without sizing the arcs' counts: a function
// planned at its first hit adds its arcs to those reserved (lazyfuncs.go).
func (p *Plan) commitArcs(sym *symtab.File, arcsOf map[int][]arcCounter, reasons []string) (short int) {
	t := p.Table
	// An arc's site hosts no short site (hostOf), not even one of its
	// own function's.
	for _, arcs := range arcsOf {
		for _, ac := range arcs {
			t.jump.arcOf[ac.site] = nil
		}
	}
	for _, gi := range slices.Sorted(maps.Keys(arcsOf)) {
		arcs := arcsOf[gi]
		ok := true
		var shorts []int
		for _, ac := range arcs {
			r := reasons[ac.site]
			switch {
			case !ac.short:
				ok = ok && r == ""
			case (r == jump.ReasonTransfer || r == jump.ReasonTarget) && p.planShortArc(sym, p.Graphs[gi].Graph, ac):
				reasons[ac.site] = ""
				shorts = append(shorts, ac.site)
			default:
				ok = false
			}
		}
		fn := p.Graphs[gi].Func
		if !ok {
			for _, ac := range arcs {
				delete(t.jump.arcOf, ac.site)
			}
			for _, i := range shorts {
				t.unshort(i)
			}
			t.jump.derive[gi] = nil
			for i := range t.addr {
				if t.fn[i] == fn && t.Kind(i)&(KindLine|KindBlock) != 0 {
					reasons[i], t.jump.length[i] = JumpUnderived, 0
				}
			}
			continue
		}
		short += len(shorts)
		measured := make([]bool, len(p.Graphs[gi].Graph.Edges))
		for _, ac := range arcs {
			measured[ac.edge] = true
			t.jump.length[ac.site] = ac.length
			t.jump.arcOf[ac.site] = append(t.jump.arcOf[ac.site], len(t.jump.arcs))
			t.jump.arcs = append(t.jump.arcs, ac)
		}
		t.jump.measured[gi] = measured
	}
	return short
}

// planShortArc plans the site of ac, a short arc's block (arcSite), as a
// short site that displaces the whole block, its conditional jump
// included, and reports whether a host took it.
func (p *Plan) planShortArc(sym *symtab.File, g *cfg.Graph, ac arcCounter) bool {
	k, ok := blockIndex(g, p.Table.addr[ac.site])
	if !ok {
		return false
	}
	return p.placeShort(sym, g, k, ac.site, int(ac.length), false)
}

// arcsIn puts the counted arcs of graph gi (arcHits, per arc) into edges
// (the graph's edge counts), and reports false when one of them was not
// counted in the target though its block ran (its site kept a breakpoint).
func (t *Table) arcsIn(gi int, c, edges, arcHits []uint64) bool {
	if gi >= len(t.jump.measured) || t.jump.measured[gi] == nil {
		return true
	}
	g := t.blk.funcs[gi].Graph
	for k, ac := range t.jump.arcs {
		if ac.graph != gi {
			continue
		}
		if !t.jump.arcServed[k] && c[g.Edges[ac.edge].From] > 0 {
			return false
		}
		edges[ac.edge] = arcHits[k]
	}
	return true
}
