package jump

// Solving a flow (Flow.run) peels equations that have one unknown left.
// Seen as a graph whose nodes are the equations, plus one ground node,
// and whose links are the unknowns (an unknown joins the two equations it
// is in, or its one equation to the ground), peeling removes a link at a
// node that has only it, so every unknown follows exactly when that graph
// has no cycle. Deriving one more block adds one link, its count: a
// union-find over the nodes then answers Flow.Solvable for it in near
// constant time, where a solve costs the whole function's flow. The
// planner asks that once per candidate block (breakpoint's deriveMore).

// A Growth is a solvable choice of derived blocks of one flow, to which
// blocks are added one at a time while every variable still follows.
type Growth struct {
	fs     *Flow
	parent []int32 // union-find over the equations, then the ground node
}

// Grow returns the growth of fs from the blocks in derived (nil: none),
// or false when fs is not solvable with them or has an unknown that is
// in no equation or in more than two.
func (fs *Flow) Grow(derived []bool) (*Growth, bool) {
	n := 2*fs.nb + 1
	gr := &Growth{fs: fs, parent: make([]int32, n)}
	for k := range gr.parent {
		gr.parent[k] = int32(k)
	}
	for k := 0; k < fs.ne; k++ {
		if (fs.measured == nil || !fs.measured[k]) && !gr.link(k) {
			return nil, false
		}
	}
	for b := 0; b < fs.nb; b++ {
		if fs.arrivals[b] && !gr.link(fs.ne+b) {
			return nil, false
		}
		if derived != nil && derived[b] && !gr.link(fs.ne+fs.nb+b) {
			return nil, false
		}
	}
	return gr, true
}

// Derive makes block b's count unknown too and reports true when every
// variable still follows; else it leaves the growth as it was.
func (gr *Growth) Derive(b int) bool { return gr.link(gr.fs.ne + gr.fs.nb + b) }

// link joins the nodes of variable u, reporting false, with nothing
// changed, when they are joined already (a cycle) or u cannot be linked.
func (gr *Growth) link(u int) bool {
	eqs := gr.fs.where[u]
	ground := int32(len(gr.parent) - 1)
	var a, b int32
	switch len(eqs) {
	case 1:
		a, b = eqs[0], ground
	case 2:
		a, b = eqs[0], eqs[1]
	default:
		return false
	}
	ra, rb := gr.find(a), gr.find(b)
	if ra == rb {
		return false
	}
	gr.parent[ra] = rb
	return true
}

// find returns the root of x's set, halving the path to it.
func (gr *Growth) find(x int32) int32 {
	for gr.parent[x] != x {
		gr.parent[x] = gr.parent[gr.parent[x]]
		x = gr.parent[x]
	}
	return x
}
