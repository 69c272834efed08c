package breakpoint

import (
	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

// Reasons a site keeps its breakpoint under the in-process engine, beside
// jump.Plan's.
const (
	JumpFlagsLive    = "the arithmetic flags are live at the site, in Go code with no stack check"
	JumpNotify       = "the dynamic linker's notification point"
	JumpResume       = "where preempted goroutines resume"
	JumpRep          = "a rep-prefixed string instruction"
	JumpRows         = "its function's lines are counted by rows (no flow graph)"
	JumpUnderived    = "its function's edges do not all follow from block counts"
	JumpNoFlow       = "its function's flow could not be recovered"
	JumpOtherSite    = "another site inside the bytes the jump covers"
	JumpNoCode       = "its code is not in the file"
	JumpRelocation   = "a displaced instruction cannot run out of line"
	JumpThreadInside = "a thread was inside the bytes the jump covers"
	JumpNoRoom       = "no room for its trampoline or counter"
)

// A JumpPlan says which sites of a table take a jump patch under the
// in-process engine, and why the others keep their breakpoint.
type JumpPlan struct {
	Sites   int            // sites that take a jump
	Derived int            // block sites never planted: their counts follow from the others'
	Short   int            // of Sites, those that take a jmp rel8 to a landing in the block before
	Padded  int            // of Sites, functions shorter than a jmp whose patch covers the padding after them
	Reasons map[string]int // sites that keep a breakpoint, by reason
}

// jumpInfo is the table's in-process state, set by PlanJumps.
type jumpInfo struct {
	length  []uint8            // per site: bytes the jump displaces, 0 for none
	derived []bool             // per site: never planted, its count derived
	derive  []*jump.DerivePlan // per graph (Table.Graphs): nil when not derivable
	host    map[int]int        // short site -> the site of its host block
	hosting map[int][]int      // host -> its short sites
	hostLen map[int]uint8      // a host's jump length before it took a short site
	landing map[int]uint8      // short site -> its landing's offset in its host block
	tail    map[int]uint8      // site -> bytes of the block after it its trampoline runs too (planTails)
	pad     map[int][]byte     // site -> the file's padding bytes its patch covers after its function (padding.go)
	least   []uint8            // per site displaced whole: the shortest patch, should the whole block not run out of line
	keep    []bool             // per site: the flags are live there, its trampoline keeps them (KeepFlags)
	// arcs are the arcs counted in the target (edgeplan.go), arcOf their
	// sites' indexes into it, measured per graph its counted edges (nil
	// for none), arcServed per arc whether its site took its patch.
	arcs      []arcCounter
	arcOf     map[int][]int
	measured  [][]bool
	arcServed []bool
	reasons   []string  // per site: why it keeps its breakpoint, "" when it does not
	calls     *callPlan // indirect calls tracked in the target (callplan.go)
	// lazy holds the entries whose patch is planned at their first
	// JumpLen (PlanOptions.LazyEntries), with what plans it; funcs the
	// functions planned at their first hit (PlanOptions.LazyFuncs,
	// lazyfuncs.go), pin 1 + the site not to derive while one is.
	lazy  *lazyEntries
	funcs *lazyFuncs
	pin   int
}

// lazyEntries are the entry sites whose patch is planned on first need,
// on the monitor's thread (one at a time): pending marks those not
// planned yet, plan plans one (setting its length or reason) once ready
// (PlanJumps has returned; before, such a site takes no jump), and
// planned and kept count the outcomes so far.
type lazyEntries struct {
	// pending holds, per site, 1 + its entry block's length to run
	// whole (entryScan) while its patch is not planned, else 0; left
	// counts those.
	pending []uint32
	left    int
	plan    func(i, whole int) string
	ready   bool
	planned int
	kept    map[string]int
}

// settle plans site i's patch if it was left for its first need.
func (t *Table) settle(i int) {
	if t.jump.funcs != nil {
		t.settleFunc(i)
	}
	whole, ok := t.lazyPending(i)
	if !ok || !t.jump.lazy.ready {
		return
	}
	lz := t.jump.lazy
	lz.pending[i] = 0
	lz.left--
	r := lz.plan(i, whole)
	t.jump.reasons[i] = r
	if r == "" {
		lz.planned++
	} else {
		lz.kept[r]++
	}
}

// lazyPending reports whether site i's patch is left for its first need,
// with the length of its entry block.
func (t *Table) lazyPending(i int) (int, bool) {
	if t.jump == nil || t.jump.lazy == nil {
		return 0, false
	}
	n := t.jump.lazy.pending[i]
	return int(n) - 1, n > 0
}

// LazyJumps returns, of the entries whose patch is planned at their first
// hit (PlanOptions.LazyEntries), how many were planned and take a jump,
// how many keep their breakpoint by reason, and how many were never
// needed (their functions never ran; functions, with LazyFuncs).
//
// Of the functions planned at their first hit (PlanOptions.LazyFuncs),
// planned and kept count the sites, derived and short the block sites
// never planted and those that take a short patch.
func (t *Table) LazyJumps() (planned int, kept map[string]int, unplanned, derived, short int) {
	if t.jump == nil {
		return 0, nil, 0, 0, 0
	}
	kept = map[string]int{}
	if lz := t.jump.lazy; lz != nil {
		planned, unplanned = lz.planned, lz.left
		for r, n := range lz.kept {
			kept[r] += n
		}
	}
	if lf := t.jump.funcs; lf != nil {
		planned += lf.planned
		unplanned += lf.left
		derived, short = lf.derived, lf.short
		for r, n := range lf.kept {
			kept[r] += n
		}
	}
	return planned, kept, unplanned, derived, short
}

// KeptReason returns why site i keeps its breakpoint under the in-process
// engine, "" when it takes a jump or is derived (never planted).
func (t *Table) KeptReason(i int) string {
	if t.jump == nil || t.jump.derived[i] || i >= len(t.jump.reasons) {
		return ""
	}
	return t.jump.reasons[i]
}

// flowOf returns graph gi's flow system, with the edges it counts.
func (t *Table) flowOf(gi int, g *cfg.Graph) *jump.Flow {
	var measured []bool
	if t.jump != nil && t.jump.measured != nil {
		measured = t.jump.measured[gi]
	}
	return jump.NewFlow(g, measured)
}

// ShortSite reports whether site i takes a short patch: a jmp rel8 to a
// landing in the dead bytes of host, the site of a block near it,
// whose whole code runs in its own trampoline (JumpLen(host) is its length,
// at most jump.MaxHostLen). The landing is host's address + Landing(i).
func (t *Table) ShortSite(i int) (host int, ok bool) {
	if t.jump == nil {
		return 0, false
	}
	t.settle(i)
	host, ok = t.jump.host[i]
	return host, ok
}

// Landing returns the offset in its host block of short site i's landing
// (ShortSite): at least jump.JmpLen, past the host's own jmp, and at most
// the host's length less jump.JmpLen.
func (t *Table) Landing(i int) uint64 {
	if t.jump == nil {
		return 0
	}
	t.settle(i)
	return uint64(t.jump.landing[i])
}

// Derived reports whether site i is never planted: under the in-process
// engine, a block whose count follows from the others' (DeriveFlow).
func (t *Table) Derived(i int) bool { return t.jump != nil && t.jump.derived[i] }

// KeepFlags reports whether site i's trampoline counts with the update that
// keeps the arithmetic flags (jump.Site.KeepFlags): they are live at the
// site.
func (t *Table) KeepFlags(i int) bool {
	if t.jump == nil {
		return false
	}
	t.settle(i)
	return t.jump.keep[i] && t.jump.length[i] > 0
}

// JumpLen returns how many bytes site i's jump patch displaces, or 0 when
// the site keeps its breakpoint.
func (t *Table) JumpLen(i int) int {
	if t.jump == nil {
		return 0
	}
	t.settle(i)
	return int(t.jump.length[i])
}

// PlanJumps marks the sites of p's table that can take a jump patch: a
// function entry counted alone, or a block start of a function whose edges
// all follow from its block counts (jump.PlanDerive), where jump.Plan
// accepts the site, no block starts inside the displaced bytes and no
// other site there; a site where the flags are live counts with the
// update that keeps them, where the stack below SP may be used
// (keepsFlags). Call it after NewPlan, before the run; opt is the
// plan's options (for the flow graphs of functions counted only at entry).
func (p *Plan) PlanJumps(sym *symtab.File, opt PlanOptions) JumpPlan {
	t := p.Table
	jp := JumpPlan{Reasons: map[string]int{}}
	if p.mayJump() {
		p.targets = sym.Targets()
	}
	t.jump = &jumpInfo{length: make([]uint8, len(t.addr)), least: make([]uint8, len(t.addr)), keep: make([]bool, len(t.addr)), derived: make([]bool, len(t.addr)), derive: make([]*jump.DerivePlan, len(p.Graphs)),
		arcOf: map[int][]int{}, measured: make([][]bool, len(p.Graphs))}
	if opt.LazyEntries {
		t.jump.lazy = &lazyEntries{pending: make([]uint32, len(t.addr)), kept: map[string]int{}, plan: func(i, whole int) string {
			return p.entryJump(sym, &opt, i, sym.Funcs[t.fn[i]], whole)
		}}
	}
	p.jumpEntries(sym)
	graphOf := map[int32]*cfg.Graph{}
	if opt.LazyFuncs {
		return p.planJumpsLazy(sym, &opt, graphOf)
	}
	arcsOf := map[int][]arcCounter{} // per graph made derivable by counting arcs
	for gi, fg := range p.Graphs {
		graphOf[fg.Func] = fg.Graph
		if dp, ok := jump.PlanDerive(fg.Graph, nil); ok {
			t.jump.derive[gi] = dp
		} else if arcs, dp := p.planArcs(sym, gi, fg); dp != nil {
			t.jump.derive[gi] = dp
			arcsOf[gi] = arcs
		}
	}
	derivable := map[int32]bool{}
	for gi, fg := range p.Graphs {
		derivable[fg.Func] = t.jump.derive[gi] != nil
	}
	t.jump.host = map[int]int{}
	t.jump.hosting = map[int][]int{}
	t.jump.hostLen = map[int]uint8{}
	t.jump.landing = map[int]uint8{}
	failed := map[int32]bool{}
	reasons := make([]string, len(t.addr))
	for i := range t.addr {
		reasons[i] = p.jumpReason(sym, &opt, i, graphOf, derivable, failed)
		if reasons[i] == jump.ReasonTransfer && p.planPadding(sym, opt, i, graphOf) {
			reasons[i] = ""
			jp.Padded++
		}
	}
	jp.Short += p.keepArcs(sym, arcsOf, reasons)
	// Short sites first: a block they make count in the target need not
	// be derived, and may let a neighbour be. Then the sites that cannot
	// take a jump are derived where they can be, and then the patchable
	// ones whose counts follow from the others' (derivehot.go), which may
	// take a short site back.
	for i, r := range reasons {
		if (r == jump.ReasonTransfer || r == jump.ReasonTarget) && p.planShort(sym, opt, i, graphOf) {
			reasons[i] = ""
			jp.Short++
		}
	}
	p.planCalls()
	for gi, fg := range p.Graphs {
		if t.jump.derive[gi] != nil {
			jp.Derived += p.deriveBlocks(sym, gi, fg)
		}
	}
	hosts := map[int]bool{}
	for _, h := range t.jump.host {
		hosts[h] = true
	}
	for gi, fg := range p.Graphs {
		if t.jump.derive[gi] != nil {
			n, unshort := p.deriveMore(sym, gi, fg, hosts)
			jp.Derived += n
			jp.Short -= unshort
		}
	}
	t.jump.reasons = reasons
	t.jump.tail = p.planTails(sym, graphOf)
	if t.jump.calls != nil {
		taken := sym.AddressTaken()
		t.listEntries(func(fn int32) bool { return fn >= 0 && int(fn) < len(sym.Funcs) && taken(sym.Funcs[fn].Addr) })
	}
	for i, r := range reasons {
		_, lazy := t.lazyPending(i)
		switch {
		case t.jump.derived[i], t.IsResume(i), lazy:
		case r == "":
			jp.Sites++
		case !t.jump.derived[i]:
			jp.Reasons[r]++
		}
	}
	if t.jump.lazy != nil {
		t.jump.lazy.ready = true
	}
	return jp
}

// mayJump reports whether some site of p's table may take a jump: one
// that is neither the dynamic linker's notification point nor a resume
// point. Only such a site needs the module's branch targets, the decoding
// of its whole code: the dynamic linker, read at every start for its
// notification point alone, never does.
func (p *Plan) mayJump() bool {
	t := p.Table
	for i := range t.addr {
		if !t.IsNotify(i) && !t.IsResume(i) {
			return true
		}
	}
	return false
}

// deriveBlocks leaves unplanted the blocks of graph gi that cannot take a
// jump and whose counts follow from the others': as many as keep every
// edge derivable, taken in address order. It returns how many.
func (p *Plan) deriveBlocks(sym *symtab.File, gi int, fg FuncGraph) int {
	t := p.Table
	g := fg.Graph
	derived := make([]bool, len(g.Blocks))
	site := make([]int, len(g.Blocks))
	// cand are the sites that take no jump, each hit a trap; flagged
	// those whose flags are live, whose update costs more than the plain
	// add. Both come before the others (deriveMore), and a trap before
	// any update: flagged are derived only where the traps derived leave
	// room (a function's block of one nop, before a branch target, is
	// derived by measuring the flagged block beside it).
	var cand, flagged []int
	for b, bl := range g.Blocks {
		i, ok := t.Index(bl.Start)
		site[b] = i
		if !ok {
			site[b] = -1
			continue
		}
		_, short := t.jump.host[i]
		traps := t.JumpLen(i) == 0
		costly := traps || t.KeepFlags(i) && !short
		_, entries := t.entries[i] // a dispatch counting its entries runs
		if t.Kind(i) == KindBlock && !t.IsEntry(i) && !t.IsNotify(i) && costly && !t.pinned(i) && !entries && bl.Start >= fg.Entry && bl.Start < fg.Tail {
			if traps {
				cand = append(cand, b)
			} else {
				flagged = append(flagged, b)
			}
		}
	}
	if len(cand) == 0 && len(flagged) == 0 {
		return 0
	}
	for _, b := range cand {
		derived[b] = true
	}
	nb, ne := len(g.Blocks), len(g.Edges)
	// Measure again the blocks whose counts are left unknown (or that
	// touch an edge left unknown), until everything follows; a function
	// was derivable with every block measured, so this ends.
	fs := t.flowOf(gi, g) // one system, solved again for each choice
	dp, unknown := fs.Solve(derived)
	for unknown != nil {
		freed := false
		free := func(b int) {
			if derived[b] {
				derived[b], freed = false, true
			}
		}
		for _, v := range unknown {
			switch {
			case v >= ne+nb:
				free(v - ne - nb)
			case v < ne:
				free(g.Edges[v].From)
				if to := g.Edges[v].To; to >= 0 {
					free(to)
				}
			}
		}
		if !freed {
			clear(derived)
		}
		dp, unknown = fs.Solve(derived)
	}
	// Freeing both ends of an unknown edge may free more than needed:
	// each freed candidate is tried again, one at a time.
	if gr, ok := fs.Grow(derived); ok {
		again := false
		for _, b := range cand {
			if !derived[b] && gr.Derive(b) {
				derived[b], again = true, true
			}
		}
		for _, b := range flagged {
			if gr.Derive(b) {
				derived[b], again = true, true
			}
		}
		if again {
			dp, _ = fs.Solve(derived)
		}
	}
	var traps []int
	for _, b := range cand {
		if !derived[b] {
			traps = append(traps, b)
		}
	}
	if len(traps) > 0 && p.trapArcs(sym, gi, fg, traps) > 0 {
		return p.deriveBlocks(sym, gi, fg) // with the arcs counted
	}
	return p.setDerived(gi, derived, site, dp)
}

// setDerived records graph gi's derived blocks and its plan, and returns
// how many blocks are derived.
func (p *Plan) setDerived(gi int, derived []bool, site []int, dp *jump.DerivePlan) int {
	t := p.Table
	n := 0
	for b, d := range derived {
		if d {
			t.jump.derived[site[b]] = true
			n++
		}
	}
	t.jump.derive[gi] = dp
	return n
}

// jumpReason decides site i: it sets its jump length and returns "", or
// returns why it keeps its breakpoint.
func (p *Plan) jumpReason(sym *symtab.File, opt *PlanOptions, i int, graphOf map[int32]*cfg.Graph, derivable, failed map[int32]bool) string {
	t := p.Table
	k := t.Kind(i)
	switch {
	case t.IsNotify(i):
		return JumpNotify
	case t.IsResume(i):
		return JumpResume
	case t.IsRep(i):
		return JumpRep
	}
	fn := t.fn[i]
	if fn < 0 || int(fn) >= len(sym.Funcs) {
		return JumpNoFlow
	}
	if k&(KindLine|KindBlock) != 0 {
		if t.BlockOf(i) < 0 {
			return JumpRows
		}
		if !derivable[fn] {
			return JumpUnderived
		}
	}
	g := graphOf[fn]
	f := sym.Funcs[fn]
	if g == nil && k&(KindLine|KindBlock) == 0 && t.addr[i] == f.Addr && !p.entryGraphs {
		if n, ok := entryScan(sym, opt, f); ok {
			p.entryScanned++
			if opt.LazyEntries && f.Size >= jump.JmpLen {
				// A function shorter than a jmp may take the padding
				// after it (planPadding): planned now, with the others.
				t.jump.lazy.pending[i] = uint32(n) + 1
				t.jump.lazy.left++
				return ""
			}
			return p.entryJump(sym, opt, i, f, n)
		}
	}
	if g == nil {
		if failed[fn] {
			return JumpNoFlow
		}
		code, ok := sym.Code(f.Addr, int(f.Size))
		if !ok {
			return JumpNoCode
		}
		build := func() (*cfg.Graph, error) {
			return cfg.Build(cfg.Options{Name: f.Name, Addr: f.Addr, Code: code, Image: opt.CFGImage, CalleeName: opt.CalleeName, CalleeWrites: p.calleeWrites(sym), SplitCalls: true, LandingPads: opt.LandingPads[f.Addr]})
		}
		var err error
		g, err = build()
		if err != nil && opt.CFGImage == nil && opt.LoadImage != nil {
			// A jump table, a landing pad: read the file's image once.
			opt.LoadImage(opt)
			opt.LoadImage = nil
			g, err = build()
		}
		if err != nil {
			failed[fn] = true
			return JumpNoFlow
		}
		graphOf[fn] = g
	}
	n, _ := jump.WholeBlock(g, t.addr[i])
	return p.siteJump(sym, opt, i, f, p.leaderOf(g), n)
}

// entryJump plans the patch of entry site i of function f, counted only
// there, whose entry block is n bytes to run whole (entryScan): no block
// of f but those symtab.Targets knows starts inside it.
func (p *Plan) entryJump(sym *symtab.File, opt *PlanOptions, i int, f symtab.Func, n int) string {
	return p.siteJump(sym, opt, i, f, p.targets.Has, n)
}

// siteJump plans the patch of site i of function f, where leader says a
// branch may land and the site's block is whole bytes to run whole (0
// for none): the jump's length, whether it keeps the flags, or why it
// keeps its breakpoint.
func (p *Plan) siteJump(sym *symtab.File, opt *PlanOptions, i int, f symtab.Func, leader func(uint64) bool, whole int) string {
	t := p.Table
	addr := t.addr[i]
	end := f.Addr + f.Size
	code, ok := sym.Code(addr, int(min(end-addr, 32)))
	if !ok {
		return JumpNoCode
	}
	fcode, _ := sym.Code(f.Addr, int(f.Size))
	js := jump.Plan(code, addr, jump.Options{Target: leader, End: end, Func: fcode, FuncAddr: f.Addr})
	if js.Len == 0 {
		return js.Reason
	}
	if !js.FlagsDead && !p.keepsFlags(sym, *opt, f) {
		return JumpFlagsLive
	}
	if i+1 < len(t.addr) && t.addr[i+1] < addr+uint64(js.Len) {
		return JumpOtherSite
	}
	t.jump.length[i] = uint8(js.Len)
	t.jump.keep[i] = !js.FlagsDead
	if n := whole; n > js.Len && (i+1 >= len(t.addr) || t.addr[i+1] >= addr+uint64(n)) && !p.targets.Within(addr, addr+uint64(n)) {
		t.jump.least[i] = uint8(js.Len)
		t.jump.length[i] = uint8(n)
	}
	return ""
}

// keepsFlags reports whether a site of f may count with the update that
// keeps the flags (jump.Site.KeepFlags), which uses 136 bytes of stack
// below the thread's SP. A C thread has them below the psABI's red zone,
// where a signal frame would go. Go has no red zone and small goroutine
// stacks: there only a function that checks its stack bound (Go's
// prologue, goPrologueEnd) may, since it runs with at least StackGuard -
// StackSmall (800) bytes above the stack's end (Go's
// cmd/internal/obj/x86/obj6.go, stacksplit), while a NOSPLIT function (the
// runtime's, an assembly file's) may be within a few bytes of it.
func (p *Plan) keepsFlags(sym *symtab.File, opt PlanOptions, f symtab.Func) bool {
	if !opt.GoPrologue {
		return true
	}
	code, ok := sym.Code(f.Addr, int(min(f.Size, goPrologueMax)))
	if !ok {
		return false
	}
	_, _, ok = goPrologueEnd(code, f.Addr)
	return ok
}

// leaderOf returns the test of whether a branch may land at an address of
// g's function: a block of g starts there, or some code of the module (a
// jump from another function, a symbol, an address in data:
// symtab.Targets) may go there. No patch covers such an address but at its
// first byte.
func (p *Plan) leaderOf(g *cfg.Graph) func(uint64) bool {
	return func(a uint64) bool { return isLeader(g, a) || p.targets.Has(a) }
}

// isLeader reports whether a block of g starts at addr.
func isLeader(g *cfg.Graph, addr uint64) bool {
	_, ok := jump.BlockAt(g, addr)
	return ok
}

// DeriveFlow sets, in c, the edge counts and arrivals of every function
// planned as derivable (PlanJumps) from its block counts, replacing what
// the cursor counted: under the in-process engine most of a function's
// hits never reach the monitor. stops are where activations of the
// table's functions stopped for good, one per activation: the instruction
// that faulted, ending the run, and where each thread was when it ended.
// Flow conservation does not hold for such an activation's block
// (jump.DerivePlan.Derive); a frame waiting for a callee that never returned (exit,
// longjmp, an exception, a thread's end) needs no stop, since a block
// that ends in a call is not conserved. It returns the number of
// functions whose counts were inconsistent with their graph (non-local
// flow the equations do not see), and, of those, the functions left
// underived because an arc they need was not counted in the target (its
// site kept a breakpoint and its block ran): their edges, and the lines
// derived from them, are the cursor's partial counts.
func (t *Table) DeriveFlow(c *Counts, stops []jump.Stop) (bad, arcsLost int) {
	if t.jump == nil || t.blk == nil {
		return 0, 0
	}
	for gi, fg := range t.blk.funcs {
		dp := t.jump.derive[gi]
		if dp == nil {
			continue
		}
		g := fg.Graph
		bc := make([]uint64, len(g.Blocks))
		for b, bl := range g.Blocks {
			if i, ok := t.Index(bl.Start); ok {
				bc[b] = c.Hits[i]
			}
		}
		edges := c.EdgeCounts[fg.FirstEdge : int(fg.FirstEdge)+len(g.Edges)]
		arr := c.BlockArrivals[fg.FirstBlock : int(fg.FirstBlock)+len(g.Blocks)]
		if !t.arcsIn(gi, bc, edges, c.ArcHits) {
			bad++ // an arc went uncounted: the cursor's counts stand
			arcsLost++
			continue
		}
		if !dp.Derive(g, bc, stops, edges, arr) {
			bad++
		}
		for b, bl := range g.Blocks {
			if i, ok := t.Index(bl.Start); ok && t.jump.derived[i] {
				c.Hits[i] = bc[b]
			}
		}
	}
	return bad, arcsLost
}
