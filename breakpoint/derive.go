package breakpoint

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
// order, depends only on the graph, so it is planned once (planDerive) and
// replayed on the counts after the run (DeriveFlow). A function whose
// equations do not give every edge this way keeps the cursor's counts: its
// sites stay breakpoints.

// A deriveStep solves one unknown from one equation.
type deriveStep struct {
	// eq is the equation: b >= 0 for the one into block b, -(a+1) for the
	// one out of block a.
	eq int32
	// unknown is what it gives: an edge index (of the graph) >= 0, or
	// -(b+1) for block b's arrivals.
	unknown int32
}

// A derivePlan is the solving order of one function's edges.
type derivePlan struct {
	steps    []deriveStep
	arrivals []bool // per block: arrivals from outside are an unknown
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

// flowLists returns the edges entering and leaving each block of g.
func flowLists(g *cfg.Graph) (in, out [][]int32) {
	in = make([][]int32, len(g.Blocks))
	out = make([][]int32, len(g.Blocks))
	for k, e := range g.Edges {
		if e.To >= 0 {
			in[e.To] = append(in[e.To], int32(k))
		}
		out[e.From] = append(out[e.From], int32(k))
	}
	return in, out
}

// planDerive returns the order in which g's edges and arrivals follow from
// its block counts, or false when some do not.
func planDerive(g *cfg.Graph) (*derivePlan, bool) {
	nb, ne := len(g.Blocks), len(g.Edges)
	dp := &derivePlan{arrivals: make([]bool, nb)}
	in, out := flowLists(g)
	// Unknowns are numbered edges 0..ne-1, then block b's arrivals ne+b;
	// equations are numbered in(b) = b, out(a) = nb+a.
	known := make([]bool, ne+nb)
	members := make([][]int, 2*nb)
	where := make([][]int, ne+nb) // the equations each unknown is in
	for b := range g.Blocks {
		dp.arrivals[b] = b == 0 || g.Blocks[b].Landing
		known[ne+b] = !dp.arrivals[b]
		for _, k := range in[b] {
			members[b] = append(members[b], int(k))
		}
		if dp.arrivals[b] {
			members[b] = append(members[b], ne+b)
		}
		if conserved(&g.Blocks[b]) {
			for _, k := range out[b] {
				members[nb+b] = append(members[nb+b], int(k))
			}
		}
	}
	left := make([]int, 2*nb)
	var ready []int
	for eq, ms := range members {
		for _, u := range ms {
			where[u] = append(where[u], eq)
			if !known[u] {
				left[eq]++
			}
		}
		if left[eq] == 1 {
			ready = append(ready, eq)
		}
	}
	for len(ready) > 0 {
		eq := ready[0]
		ready = ready[1:]
		if left[eq] != 1 {
			continue
		}
		for _, u := range members[eq] {
			if known[u] {
				continue
			}
			known[u] = true
			s := deriveStep{eq: int32(eq), unknown: int32(u)}
			if eq >= nb {
				s.eq = -int32(eq-nb) - 1
			}
			if u >= ne {
				s.unknown = -int32(u-ne) - 1
			}
			dp.steps = append(dp.steps, s)
			for _, o := range where[u] {
				left[o]--
				if left[o] == 1 {
					ready = append(ready, o)
				}
			}
			break
		}
	}
	for _, k := range known {
		if !k {
			return nil, false
		}
	}
	return dp, true
}

// derive replays dp on the block counts c, giving every edge count and the
// arrivals of every block. fault, if not nil, is the link-time address of
// the instruction that ended the run in the middle of its block: that
// block's last entry left along no edge. It reports whether the counts were
// consistent (no unknown came out negative, which non-local flow the
// equations do not see can cause; such an unknown is taken as 0).
func (dp *derivePlan) derive(g *cfg.Graph, c []uint64, fault *uint64, edges, arrivals []uint64) bool {
	in, out := flowLists(g)
	clear(edges)
	clear(arrivals)
	ok := true
	for _, s := range dp.steps {
		var rhs, sum int64
		if s.eq >= 0 {
			b := int(s.eq)
			rhs = int64(c[b])
			for _, k := range in[b] {
				sum += int64(edges[k])
			}
			sum += int64(arrivals[b])
		} else {
			a := int(-s.eq - 1)
			bl := &g.Blocks[a]
			rhs = int64(c[a])
			if fault != nil && *fault >= bl.Start && *fault < bl.End && rhs > 0 {
				rhs--
			}
			for _, k := range out[a] {
				sum += int64(edges[k])
			}
		}
		// The unknown is still 0 in the sums.
		v := rhs - sum
		if v < 0 {
			v, ok = 0, false
		}
		if s.unknown >= 0 {
			edges[s.unknown] = uint64(v)
		} else {
			arrivals[-s.unknown-1] = uint64(v)
		}
	}
	return ok
}
