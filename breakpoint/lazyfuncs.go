package breakpoint

import (
	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

// Functions planned at their first hit (PlanOptions.LazyFuncs).
//
// Under the in-process engine a launched target takes a function's patches
// at the function's first hit, so the plan of them (which sites take a
// jump, which keep their int3, which block counts are derived, which arcs
// a trampoline counts) is needed no sooner. PlanJumps leaves it undone for
// every function with a flow graph; the first JumpLen (or KeepFlags) of
// one of its sites plans the whole function, with what the whole-table
// plan would have made of it: each step below reads and writes only the
// function's own sites and graph. Two things differ from the plan made up
// front, and neither changes a count:
//   - the start plants every site of such a function, the ones that will
//     be derived too (nothing says yet which they are): the monitor puts
//     their original bytes back when it first serves the function in a
//     process (DerivedOf);
//   - the site whose trap asked for the plan is never derived (pin): its
//     thread is there, and its hit is counted as any measured site's.
//
// The arcs' counters follow the sites' in a thread's slab, and the slab's
// layout is fixed at the first patch: PlanJumps reserves maxArcs for every
// graph whose block counts alone do not derive its edges (jump.PlanDerive),
// and the arcs take their places in the order their functions are planned.
// So with Calls for the entries' call slots: one for every entry of a
// function whose address the module takes (listEntries lists fewer: those
// that take a jump without keeping the flags, and are not derived).

// lazyFuncs is the state of the functions left for their first hit.
type lazyFuncs struct {
	state   []uint8 // per function (symtab index): lazyNone, lazyPending, lazyPlanned
	graphOf []int32 // per function: 1 + its graph's index in Plan.Graphs, 0 for none
	plan    func(fn int32, pin int)
	ready   bool
	arcCap  int                 // arc counters reserved
	taken   func(fn int32) bool // with Calls: whether fn's address is taken (listEntries)
	left    int                 // functions pending
	// What the plans made so far, for JumpPlan's notes (LazyJumps).
	planned, derived, short int
	kept                    map[string]int
}

const (
	lazyNone uint8 = iota
	lazyPending
	lazyPlanned
)

// settleFunc plans the function of site i if it was left for its first
// hit, never deriving site i.
func (t *Table) settleFunc(i int) {
	lf := t.jump.funcs
	fn := t.fn[i]
	if fn < 0 || int(fn) >= len(lf.state) || lf.state[fn] != lazyPending || !lf.ready {
		return
	}
	lf.state[fn] = lazyPlanned
	lf.left--
	lf.plan(fn, i)
}

// LazyFunc reports whether site i belongs to a function whose plan was
// left for its first hit (PlanOptions.LazyFuncs), planned since or not:
// the start planted all of its sites, and the monitor must put back the
// bytes of those DerivedOf returns.
func (t *Table) LazyFunc(i int) bool {
	if t.jump == nil || t.jump.funcs == nil {
		return false
	}
	fn := t.fn[i]
	return fn >= 0 && int(fn) < len(t.jump.funcs.state) && t.jump.funcs.state[fn] != lazyNone
}

// DerivedOf plans site i's function if it was left for its first hit (as
// JumpLen does) and returns its derived sites: planted at the start of a
// lazily planned function, never to be (their counts follow from the
// others').
func (t *Table) DerivedOf(i int) []int {
	if !t.LazyFunc(i) {
		return nil
	}
	t.settleFunc(i)
	var out []int
	lo, hi := t.FuncSites(i)
	for k := lo; k < hi; k++ {
		if t.jump.derived[k] {
			out = append(out, k)
		}
	}
	return out
}

// lazyPlan sets p's table up for functions planned at their first hit:
// the graphs that block counts alone derive get their plan now (cheap, and
// it bounds the arcs to reserve), every function with a graph is left
// pending, and the sites outside such functions are planned as PlanJumps
// would. It returns those sites' reasons and the graph per function.
func (p *Plan) lazyPlan(sym *symtab.File, opt *PlanOptions, graphOf map[int32]*cfg.Graph) []string {
	t := p.Table
	lf := &lazyFuncs{state: make([]uint8, len(sym.Funcs)), graphOf: make([]int32, len(sym.Funcs)), kept: map[string]int{}}
	t.jump.funcs = lf
	for gi, fg := range p.Graphs {
		if fg.Func < 0 || int(fg.Func) >= len(sym.Funcs) {
			continue
		}
		if dp, ok := jump.PlanDerive(fg.Graph, nil); ok {
			t.jump.derive[gi] = dp
		} else {
			lf.arcCap += maxArcs
		}
		lf.arcCap += trapArcBlocks(fg.Graph)
		lf.graphOf[fg.Func] = int32(gi) + 1
		lf.state[fg.Func] = lazyPending
		lf.left++
	}
	t.cnt.ArcHits = make([]uint64, lf.arcCap)
	t.jump.arcServed = make([]bool, lf.arcCap)
	reasons := make([]string, len(t.addr))
	t.jump.reasons = reasons
	failed := map[int32]bool{}
	for i := range t.addr {
		if fn := t.fn[i]; fn >= 0 && int(fn) < len(lf.state) && lf.state[fn] == lazyPending {
			continue
		}
		reasons[i] = p.jumpReason(sym, opt, i, graphOf, nil, failed)
		if reasons[i] == jump.ReasonTransfer && p.planPadding(sym, *opt, i, graphOf) {
			reasons[i] = ""
		}
	}
	lf.plan = func(fn int32, pin int) { p.planFunc(sym, opt, graphOf, fn, pin) }
	return reasons
}

// planFunc plans the sites of function fn, left for its first hit, as
// PlanJumps plans every function's up front; pin, the site whose hit asked
// for it, is never derived.
func (p *Plan) planFunc(sym *symtab.File, opt *PlanOptions, graphOf map[int32]*cfg.Graph, fn int32, pin int) {
	t := p.Table
	lf := t.jump.funcs
	gi := int(lf.graphOf[fn]) - 1
	fg := p.Graphs[gi]
	lo, hi := t.FuncSites(pin)
	t.jump.pin = pin + 1
	defer func() { t.jump.pin = 0 }()
	reasons := t.jump.reasons
	arcsOf := map[int][]arcCounter{}
	if t.jump.derive[gi] == nil {
		if arcs, dp := p.planArcs(sym, gi, fg); dp != nil && len(t.jump.arcs)+len(arcs) <= lf.arcCap {
			t.jump.derive[gi] = dp
			arcsOf[gi] = arcs
		}
	}
	derivable := map[int32]bool{fn: t.jump.derive[gi] != nil}
	failed := map[int32]bool{}
	for i := lo; i < hi; i++ {
		reasons[i] = p.jumpReason(sym, opt, i, graphOf, derivable, failed)
		if reasons[i] == jump.ReasonTransfer && p.planPadding(sym, *opt, i, graphOf) {
			reasons[i] = ""
		}
	}
	short := p.commitArcs(sym, arcsOf, reasons)
	for i := lo; i < hi; i++ {
		if r := reasons[i]; (r == jump.ReasonTransfer || r == jump.ReasonTarget) && p.planShort(sym, *opt, i, graphOf) {
			reasons[i] = ""
			short++
		}
	}
	derived := 0
	if t.jump.derive[gi] != nil {
		derived += p.deriveBlocks(sym, gi, fg)
		hosts := map[int]bool{}
		for i := lo; i < hi; i++ {
			if h, ok := t.jump.host[i]; ok {
				hosts[h] = true
			}
		}
		n, unshort := p.deriveMore(sym, gi, fg, hosts)
		derived += n
		short -= unshort
	}
	p.planTailsIn(sym, graphOf, lo, hi, t.jump.tail)
	if t.jump.calls != nil {
		t.listEntriesIn(lo, hi, lf.taken)
	}
	lf.derived += derived
	lf.short += short
	for i := lo; i < hi; i++ {
		switch r := reasons[i]; {
		case t.jump.derived[i], t.IsResume(i):
		case r == "":
			lf.planned++
		default:
			lf.kept[r]++
		}
	}
}

// planJumpsLazy is PlanJumps with the functions that have a flow graph
// left for their first hit (lazyPlan).
func (p *Plan) planJumpsLazy(sym *symtab.File, opt *PlanOptions, graphOf map[int32]*cfg.Graph) JumpPlan {
	t := p.Table
	jp := JumpPlan{Reasons: map[string]int{}}
	for _, fg := range p.Graphs {
		graphOf[fg.Func] = fg.Graph
	}
	t.jump.host = map[int]int{}
	t.jump.hosting = map[int][]int{}
	t.jump.hostLen = map[int]uint8{}
	t.jump.landing = map[int]uint8{}
	t.jump.tail = map[int]uint8{}
	reasons := p.lazyPlan(sym, opt, graphOf)
	p.planCalls()
	if cp := t.jump.calls; cp != nil {
		// Every entry that may check has its slots; the functions left
		// for their first hit list theirs then.
		taken := sym.AddressTaken()
		t.jump.funcs.taken = func(fn int32) bool { return fn >= 0 && int(fn) < len(sym.Funcs) && taken(sym.Funcs[fn].Addr) }
		for i := range t.addr {
			if t.IsEntry(i) && t.jump.funcs.taken(t.fn[i]) {
				cp.reserved++
			}
		}
		for i := 0; i < len(t.addr); {
			lo, hi := t.FuncSites(i)
			if !t.LazyFunc(lo) {
				t.listEntriesIn(lo, hi, t.jump.funcs.taken)
			}
			i = hi
		}
	}
	for i, r := range reasons {
		_, lazy := t.lazyPending(i)
		switch {
		case t.LazyFunc(i), t.IsResume(i), lazy:
		case r == "":
			jp.Sites++
		default:
			jp.Reasons[r]++
		}
	}
	if t.jump.lazy != nil {
		t.jump.lazy.ready = true
	}
	t.jump.funcs.ready = true
	return jp
}
