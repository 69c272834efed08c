package linecount

// A Func is one function's flow graph with its counts.
type Func struct {
	Blocks []Block
	// Arcs are the transfers of control between the function's blocks,
	// and the arrivals from outside them (From == Outside): calls of the
	// function, jumps into it from elsewhere, a longjmp landing.
	Arcs []Arc
}

// A Block is a basic block and how often it ran.
type Block struct {
	// Lines are the line numbers (the caller's numbering, 0 to n-1) of the
	// block's statements, each once, in order of first appearance.
	Lines []int32
	Count uint64
	// Exceptional marks a block entered only by the unwinder (a landing
	// pad): gcov does not flag its lines as having an unexecuted block.
	Exceptional bool
}

// Outside is the From of an Arc that enters the function from no block
// of it.
const Outside = -1

// An Arc is one transfer of control, From one block To another (indexes
// into Func.Blocks), taken Count times.
type Arc struct {
	From, To int32
	Count    uint64
}

// A Result is the count of every line numbered below n.
type Result struct {
	// Counts is indexed by line number.
	Counts []uint64
	// Exists is true for every line some block has: a line with code,
	// even when it never ran.
	Exists []bool
	// Unexecuted is true for a line with a block that never ran, not
	// counting landing pads (gcov marks its count with '*').
	Unexecuted []bool
}

// Lines derives the count of every line 0 to n-1 from funcs. A line that
// several functions share (a macro, a template instantiated twice) is
// counted over all of them, as gcov does.
func Lines(funcs []Func, n int) Result {
	res := Result{Counts: make([]uint64, n), Exists: make([]bool, n), Unexecuted: make([]bool, n)}
	mention := make([]uint64, n)
	listed := make([]bool, n)
	entries := make([]uint64, n)
	for fi := range funcs {
		f := &funcs[fi]
		// owner[b] is the line block b is listed under, -1 for none.
		owner := make([]int32, len(f.Blocks))
		byLine := map[int32][]int32{}
		for b := range f.Blocks {
			bl := &f.Blocks[b]
			owner[b] = -1
			for _, l := range bl.Lines {
				if l < 0 || int(l) >= n {
					continue
				}
				res.Exists[l] = true
				mention[l] += bl.Count
				if bl.Count == 0 && !bl.Exceptional {
					res.Unexecuted[l] = true
				}
			}
			if k := len(bl.Lines); k > 0 {
				if l := bl.Lines[k-1]; l >= 0 && int(l) < n {
					owner[b] = l
					listed[l] = true
					byLine[l] = append(byLine[l], int32(b))
				}
			}
		}
		for _, a := range f.Arcs {
			if a.To < 0 || int(a.To) >= len(owner) {
				continue
			}
			l := owner[a.To]
			if l < 0 {
				continue
			}
			if a.From == Outside || a.From < 0 || int(a.From) >= len(owner) || owner[a.From] != l {
				entries[l] += a.Count
			}
		}
		if len(byLine) == 0 {
			continue
		}
		succ := successors(f)
		for l, blocks := range byLine {
			entries[l] += cycles(f, succ, owner, l, blocks)
		}
	}
	for l := range n {
		if listed[l] {
			res.Counts[l] = entries[l]
		} else {
			res.Counts[l] = mention[l]
		}
	}
	return res
}

// successors returns, for each block, the indexes into f.Arcs of the arcs
// leaving it, in f.Arcs order.
func successors(f *Func) [][]int32 {
	succ := make([][]int32, len(f.Blocks))
	for k, a := range f.Arcs {
		if a.From >= 0 && int(a.From) < len(f.Blocks) && a.To >= 0 && int(a.To) < len(f.Blocks) {
			succ[a.From] = append(succ[a.From], int32(k))
		}
	}
	return succ
}

// cycles returns how often control went round loops that stay on line l,
// whose blocks (in index order) are blocks: gcov's get_cycles_count. Each
// elementary cycle found (K. A. Hawick and H. A. James, "Enumerating
// circuits and loops in graphs with self-arcs and multiple-arcs") adds the
// smallest remaining count of its arcs and takes it off each of them, so
// an arc is never counted twice.
func cycles(f *Func, succ [][]int32, owner []int32, l int32, blocks []int32) uint64 {
	c := &circuits{f: f, succ: succ, owner: owner, line: l, rest: make(map[int32]uint64)}
	for _, b := range blocks {
		for _, k := range succ[b] {
			c.rest[k] = f.Arcs[k].Count
		}
	}
	var total uint64
	for _, start := range blocks {
		c.start = start
		c.blocked = map[int32]bool{}
		c.lists = map[int32][]int32{}
		c.path = c.path[:0]
		c.circuit(start, &total)
	}
	return total
}

// circuits is the state of one line's cycle search.
type circuits struct {
	f       *Func
	succ    [][]int32
	owner   []int32
	line    int32
	rest    map[int32]uint64 // arc index -> count not yet given to a cycle
	start   int32
	blocked map[int32]bool
	lists   map[int32][]int32 // block -> blocks to unblock with it
	path    []int32           // arc indexes from start
}

// on reports whether arc k stays among the line's blocks at or after the
// start block and still has a count to give.
func (c *circuits) on(k int32) (int32, bool) {
	w := c.f.Arcs[k].To
	return w, w >= c.start && c.owner[w] == c.line && c.rest[k] > 0
}

func (c *circuits) circuit(v int32, total *uint64) bool {
	found := false
	c.blocked[v] = true
	for _, k := range c.succ[v] {
		w, ok := c.on(k)
		if !ok {
			continue
		}
		c.path = append(c.path, k)
		if w == c.start {
			*total += c.take()
			found = true
		} else if !c.pathSpent() && !c.blocked[w] {
			if c.circuit(w, total) {
				found = true
			}
		}
		c.path = c.path[:len(c.path)-1]
	}
	if found {
		c.unblock(v)
		return true
	}
	for _, k := range c.succ[v] {
		w, ok := c.on(k)
		if !ok {
			continue
		}
		list := c.lists[w]
		seen := false
		for _, x := range list {
			seen = seen || x == v
		}
		if !seen {
			c.lists[w] = append(list, v)
		}
	}
	return false
}

// take gives the cycle on c.path its count: the smallest remaining count
// of its arcs, taken off each.
func (c *circuits) take() uint64 {
	least := ^uint64(0)
	for _, k := range c.path {
		least = min(least, c.rest[k])
	}
	for _, k := range c.path {
		c.rest[k] -= least
	}
	return least
}

// pathSpent reports whether an arc of the path has nothing left to give.
func (c *circuits) pathSpent() bool {
	for _, k := range c.path {
		if c.rest[k] == 0 {
			return true
		}
	}
	return false
}

func (c *circuits) unblock(u int32) {
	delete(c.blocked, u)
	list := c.lists[u]
	delete(c.lists, u)
	for _, w := range list {
		if c.blocked[w] {
			c.unblock(w)
		}
	}
}
