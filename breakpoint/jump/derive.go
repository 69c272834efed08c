package jump

import (
	"github.com/patchprof/patchprof/cfg"
)

// The in-process engine counts how often each block ran, not which edge
// brought control there: a trampoline knows its site, not where the thread
// came from. The edge counts the line model needs (and --blocks reports)
// are derived from the block counts by flow conservation, as gcov derives
// the arcs it does not instrument from those it does (gcc/gcov.cc,
// solve_flow_graph):
//
//   - into every block: its count is the sum of the edges entering it, plus
//     its arrivals from outside the function's flow (calls, for the first
//     block; the unwinder or the runtime, for a landing pad);
//   - out of every block that ends in a jump, a branch, a jump table or a
//     fall-through: its count is the sum of the edges leaving it. A block
//     that ends in a call is not: the callee may never return (exit,
//     longjmp, an exception).
//
// An equation with one unknown left gives that unknown; solving it may
// leave another equation with one. Which unknowns get solved, and in what
// order, depends only on the graph, so it is planned once (PlanDerive) and
// replayed on the counts after the run (DerivePlan.Derive, which package
// breakpoint's Table.DeriveFlow calls). A function whose equations do not
// give every edge this way keeps the cursor's counts: its sites stay
// breakpoints.

// A deriveStep solves one unknown from one equation.
type deriveStep struct {
	eq      int32 // the equation: in(b) = b, out(a) = nb+a
	unknown int32 // the variable it gives (see DerivePlan)
}

// A DerivePlan is the solving order of one function's flow. Its variables
// are numbered: edges 0..ne-1, then the arrivals of block b at ne+b, then
// the count of block b at ne+nb+b. Every equation is a sum of variables
// with coefficients +1 (edges, arrivals) and -1 (the block's count) equal
// to 0, or, for the out-equation of a block, to minus the activations that
// stopped inside it (Derive's stops).
type DerivePlan struct {
	steps    []deriveStep
	arrivals []bool // per block: arrivals from outside are a variable
	derived  []bool // per block: its count is derived, not measured
	measured []bool // per edge: counted in the target (edgecount.go), nil for none
	members  [][]int32
}

// conserved reports whether a block's count equals the sum of the edges
// leaving it whenever the program runs on after it.
func conserved(b *cfg.Block) bool {
	switch b.Term {
	case cfg.TermFall, cfg.TermJump, cfg.TermCond, cfg.TermTable, cfg.TermTailCall:
		return true
	}
	return false
}

// PlanDerive returns the order in which g's edges, arrivals and the counts
// of the blocks in derived (nil: none) follow from the counts of the other
// blocks, or false when some do not.
func PlanDerive(g *cfg.Graph, derived []bool) (*DerivePlan, bool) {
	dp, unknown := NewFlow(g, nil).Solve(derived)
	return dp, unknown == nil
}

// A Flow is the equations of one function's flow, built once and solved
// for as many choices of derived blocks as the planner tries.
type Flow struct {
	nb, ne   int
	measured []bool    // per edge: counted in the target, not derived (nil: none)
	arrivals []bool    // per block: arrivals from outside are a variable
	members  [][]int32 // per equation, its variables
	where    [][]int32 // per variable, the equations it is in
	known    []bool    // scratch, per variable
	left     []int     // scratch, per equation
}

// NewFlow returns the equations of g's flow. measured, per edge (nil:
// none), marks the edges counted in the target, known in every solve: the
// flow keeps the slice, so an edge the caller marks between two solves is
// known in the second.
func NewFlow(g *cfg.Graph, measured []bool) *Flow {
	nb, ne := len(g.Blocks), len(g.Edges)
	fs := &Flow{nb: nb, ne: ne, measured: measured, arrivals: make([]bool, nb), members: make([][]int32, 2*nb),
		where: make([][]int32, ne+2*nb), known: make([]bool, ne+2*nb), left: make([]int, 2*nb)}
	for b := range g.Blocks {
		fs.arrivals[b] = b == 0 || g.Blocks[b].Landing
	}
	// A tail jump through a pointer leaves with no edge: its block's
	// count is no sum of edges (it would be taken for 0).
	cons := make([]bool, nb)
	for b := range g.Blocks {
		cons[b] = conserved(&g.Blocks[b])
	}
	for b := range g.Blocks {
		if g.Blocks[b].Term == cfg.TermTailCall && len(g.Succs(b)) == 0 {
			cons[b] = false
		}
	}
	for k, e := range g.Edges {
		if e.To >= 0 {
			fs.members[e.To] = append(fs.members[e.To], int32(k))
		}
		if cons[e.From] {
			fs.members[nb+e.From] = append(fs.members[nb+e.From], int32(k))
		}
	}
	for b := range g.Blocks {
		fs.members[b] = append(fs.members[b], int32(ne+b), int32(ne+nb+b))
		if cons[b] {
			fs.members[nb+b] = append(fs.members[nb+b], int32(ne+nb+b))
		}
	}
	for eq, ms := range fs.members {
		for _, u := range ms {
			fs.where[u] = append(fs.where[u], int32(eq))
		}
	}
	return fs
}

// Solvable reports whether every variable follows with the blocks in
// derived not measured, without building the plan.
func (fs *Flow) Solvable(derived []bool) bool {
	return fs.run(derived, nil)
}

// Solve returns the plan for derived (nil: none derived), or the
// variables left unknown, numbered as DerivePlan says.
func (fs *Flow) Solve(derived []bool) (*DerivePlan, []int) {
	dp := &DerivePlan{arrivals: make([]bool, fs.nb), derived: make([]bool, fs.nb), members: fs.members}
	copy(dp.arrivals, fs.arrivals)
	if fs.measured != nil {
		dp.measured = append([]bool(nil), fs.measured...)
	}
	if derived != nil {
		copy(dp.derived, derived)
	}
	if fs.run(dp.derived, &dp.steps) {
		return dp, nil
	}
	var unknown []int
	for v, k := range fs.known {
		if !k {
			unknown = append(unknown, v)
		}
	}
	return nil, unknown
}

// run peels the equations with one unknown left, recording the steps when
// steps is not nil, and reports whether every variable became known.
func (fs *Flow) run(derived []bool, steps *[]deriveStep) bool {
	nb, ne := fs.nb, fs.ne
	known := fs.known
	for b := 0; b < nb; b++ {
		known[ne+b] = !fs.arrivals[b]
		known[ne+nb+b] = derived == nil || !derived[b]
	}
	for k := 0; k < ne; k++ {
		known[k] = fs.measured != nil && fs.measured[k]
	}
	var ready []int32
	for eq, ms := range fs.members {
		n := 0
		for _, u := range ms {
			if !known[u] {
				n++
			}
		}
		fs.left[eq] = n
		if n == 1 {
			ready = append(ready, int32(eq))
		}
	}
	for len(ready) > 0 {
		eq := ready[0]
		ready = ready[1:]
		if fs.left[eq] != 1 {
			continue
		}
		for _, u := range fs.members[eq] {
			if known[u] {
				continue
			}
			known[u] = true
			if steps != nil {
				*steps = append(*steps, deriveStep{eq: eq, unknown: u})
			}
			for _, o := range fs.where[u] {
				fs.left[o]--
				if fs.left[o] == 1 {
					ready = append(ready, o)
				}
			}
			break
		}
	}
	for _, k := range known {
		if !k {
			return false
		}
	}
	return true
}

// A Stop is where an activation of a profiled function stopped for good:
// the faulting instruction of a crash, where a thread was when it ended.
// Flow conservation does not hold for it (Derive).
type Stop struct {
	Addr uint64 // link-time address of the instruction it stopped at
	// Entered: the activation had begun the block at Addr (the
	// instruction at Addr faulted, or the block's count was taken).
	// Otherwise one at a block's first instruction had arrived along an
	// edge and not begun the block.
	Entered bool
}

// Derive replays dp on the counts of the measured blocks (c; the derived
// blocks' entries are overwritten with their derived counts) and of the
// measured edges (their entries of edges), giving every edge count and the
// arrivals of every block. stops (repeats allowed) are where activations
// stopped for good. One inside its block entered it and left along no
// edge, so it is taken out of that block's out-equation, whichever
// variable the equation gives: the block's own count, when it is derived,
// is then one more than its edges say. One at a block's first
// instruction that had not begun the block took an edge into it that
// the block's count does not hold, so it is added to that block's
// in-equation (unless arrivals from outside are a variable there: a call
// or an unwinder's arrival is not counted until the block begins). A stop
// in a block ending in a call (a frame waiting for its callee) changes
// nothing: that block has no out-equation. It reports whether the counts
// were consistent (no variable came out negative, which non-local flow
// the equations do not see can cause; such a variable is taken as 0).
func (dp *DerivePlan) Derive(g *cfg.Graph, c []uint64, stops []Stop, edges, arrivals []uint64) bool {
	nb, ne := len(g.Blocks), len(g.Edges)
	v := make([]int64, ne+2*nb)
	for b := range g.Blocks {
		if !dp.derived[b] {
			v[ne+nb+b] = int64(c[b])
		}
	}
	for k, m := range dp.measured {
		if m {
			v[k] = int64(edges[k])
		}
	}
	coef := func(u int32) int64 {
		if int(u) >= ne+nb {
			return -1
		}
		return 1
	}
	// rhs0 is each equation's constant: per block, the arrivals not begun
	// (in-equations), less the activations that stopped inside it
	// (out-equations).
	var rhs0 map[int32]int64
	for _, st := range stops {
		b, ok := g.BlockAt(st.Addr)
		if !ok || st.Addr < g.Addr || st.Addr >= g.End {
			continue
		}
		if rhs0 == nil {
			rhs0 = map[int32]int64{}
		}
		switch {
		case st.Addr != g.Blocks[b].Start || st.Entered:
			rhs0[int32(nb+b)]--
		case !dp.arrivals[b]:
			rhs0[int32(b)]++
		}
	}
	ok := true
	for _, s := range dp.steps {
		rhs := rhs0[s.eq]
		for _, u := range dp.members[s.eq] {
			if u != s.unknown {
				rhs -= coef(u) * v[u]
			}
		}
		x := rhs * coef(s.unknown)
		if x < 0 {
			x, ok = 0, false
		}
		v[s.unknown] = x
	}
	// The edges into a block with arrivals not begun hold them; the
	// out-of-line engine counts an edge when its destination begins, so
	// each such arrival is taken back from one edge into the block, which
	// leaves it a stop of the block it came from. Which one that was the
	// counts do not tell when several edges enter: the busiest is taken.
	// Block and line counts come out the same whichever it is.
	for eq, n := range rhs0 {
		for b := int(eq); b < nb && n > 0; n-- {
			k := -1
			for e, x := range g.Edges {
				if x.To == b && v[e] > 0 && (k < 0 || v[e] > v[k]) {
					k = e
				}
			}
			if k < 0 {
				break
			}
			v[k]--
		}
	}
	for k := range edges {
		edges[k] = uint64(v[k])
	}
	for b := range arrivals {
		arrivals[b] = uint64(v[ne+b])
		if dp.derived[b] {
			c[b] = uint64(v[ne+nb+b])
		}
	}
	return ok
}

// LoopDepth returns, per block of g, how many loops hold it: a loop is
// the span of blocks from the target of a backward edge to its source (a
// compiler lays a loop's body out contiguously; a scattered loop only
// makes the guess worse, never the counts). It is the guess at frequency
// that needs no profile, by which the planner picks the blocks to derive
// first.
func LoopDepth(g *cfg.Graph) []int {
	depth := make([]int, len(g.Blocks))
	for _, e := range g.Edges {
		if e.To < 0 || e.To > e.From {
			continue
		}
		for b := e.To; b <= e.From; b++ {
			depth[b]++
		}
	}
	return depth
}
