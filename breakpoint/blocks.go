package breakpoint

import (
	"fmt"

	"github.com/patchprof/patchprof/cfg"
)

// A FuncGraph is the flow graph of one block-counted function, as SetBlocks
// takes it: the graph cfg recovered and where its blocks and edges sit in the
// table-wide numbering (block k of the graph is table-wide block FirstBlock+k,
// edge k is FirstEdge+k).
type FuncGraph struct {
	Func  int32 // the function's index, as in SiteSpec.Func
	Graph *cfg.Graph
	// Entry is the address that runs once per call (the function's entry
	// site: its first instruction, or the one after Go's stack check);
	// Tail is where Go's out-of-line morestack call starts (the function's
	// end otherwise). Blocks outside [Entry, Tail) belong to the stack
	// check, which runs before the activation opens (see Cursor).
	Entry, Tail           uint64
	FirstBlock, FirstEdge int32
}

// per-block flags of blockGraph.flags.
const (
	blockFirst = 1 << iota // the function's first block (Graph.Blocks[0])
	blockPre               // a block of Go's stack check, before the activation
)

// A blockGraph is every block-counted function's graph in table-wide
// numbering, stored for the hit path: for each block, its function and the
// edges entering it (sources and edge indexes).
type blockGraph struct {
	funcs   []FuncGraph
	fn      []int32  // per block: function index
	flags   []uint8  // per block: blockFirst, blockPre
	inStart []uint32 // edges entering block b are in[inStart[b]:inStart[b+1]]
	inFrom  []int32  // table-wide source block of each entering edge
	inEdge  []int32  // table-wide index of each entering edge
	nedges  int
}

// SetBlocks gives t the flow graphs of the functions whose block starts it
// holds (sites with KindBlock, SiteSpec.Block numbering their blocks) and
// allocates EdgeCounts and BlockArrivals. The numbering must be dense:
// funcs cover blocks and edges 0, 1, ... without gaps or overlaps, in order.
// Call it once, after NewTable and before the first Hit or At.
func (t *Table) SetBlocks(funcs []FuncGraph) error {
	b := &blockGraph{funcs: funcs}
	nb, ne := 0, 0
	for _, f := range funcs {
		if f.Graph == nil || int(f.FirstBlock) != nb || int(f.FirstEdge) != ne {
			return fmt.Errorf("breakpoint: SetBlocks: function %d: numbering not dense (first block %d, edge %d; want %d, %d)", f.Func, f.FirstBlock, f.FirstEdge, nb, ne)
		}
		nb += len(f.Graph.Blocks)
		ne += len(f.Graph.Edges)
	}
	b.fn = make([]int32, nb)
	b.flags = make([]uint8, nb)
	in := make([]uint32, nb+1)
	for _, f := range funcs {
		g := f.Graph
		for k, bl := range g.Blocks {
			gb := int(f.FirstBlock) + k
			b.fn[gb] = f.Func
			if k == 0 {
				b.flags[gb] |= blockFirst
			}
			if bl.Start < f.Entry || bl.Start >= f.Tail {
				b.flags[gb] |= blockPre
			}
		}
		for _, e := range g.Edges {
			if e.To >= 0 {
				in[int(f.FirstBlock)+e.To+1]++
			}
		}
	}
	for k := 1; k <= nb; k++ {
		in[k] += in[k-1]
	}
	b.inStart = in
	b.inFrom = make([]int32, in[nb])
	b.inEdge = make([]int32, in[nb])
	fill := make([]uint32, nb)
	copy(fill, in[:nb])
	for _, f := range funcs {
		for k, e := range f.Graph.Edges {
			if e.To < 0 {
				continue
			}
			to := int(f.FirstBlock) + e.To
			b.inFrom[fill[to]] = f.FirstBlock + int32(e.From)
			b.inEdge[fill[to]] = f.FirstEdge + int32(k)
			fill[to]++
		}
	}
	b.nedges = ne
	for i, gb := range t.siteBlock {
		if gb >= int32(nb) {
			return fmt.Errorf("breakpoint: SetBlocks: site %#x names block %d of %d", t.addr[i], gb, nb)
		}
	}
	t.blk = b
	t.cnt.EdgeCounts = make([]uint64, ne)
	t.cnt.BlockArrivals = make([]uint64, nb)
	return nil
}

// Graphs returns the functions given to SetBlocks; the slice is shared.
func (t *Table) Graphs() []FuncGraph {
	if t.blk == nil {
		return nil
	}
	return t.blk.funcs
}

// BlockOf returns the table-wide index of the block starting at site i, or
// -1 when the site is not a block start.
func (t *Table) BlockOf(i int) int32 {
	if t.siteBlock == nil || t.flags[i]&uint8(KindBlock) == 0 {
		return -1
	}
	return t.siteBlock[i]
}

// edgeInto returns the table-wide edge from block from to block to, or -1.
func (b *blockGraph) edgeInto(from, to int32) int32 {
	if from < 0 {
		return -1
	}
	for k := b.inStart[to]; k < b.inStart[to+1]; k++ {
		if b.inFrom[k] == from {
			return b.inEdge[k]
		}
	}
	return -1
}

// entryJump is called at an entry site that starts block gb, before the
// activation stack is popped: a jump back to the function's entry within one
// activation (a loop whose head is the entry, a tail call to itself) finds the
// function's activation on top at the same stack pointer. It returns the
// activation's last block, or -1 for a new call.
func (t *Table) entryJump(c *Cursor, fn int32, sp uint64) int32 {
	n := len(c.stack)
	if n == 0 {
		return -1
	}
	top := &c.stack[n-1]
	if top.fn != fn || top.sp != sp || top.block < 0 {
		return -1
	}
	return top.block
}

// hitBlock counts the edge that brought control to block site i: from the
// last block of the same activation (see Cursor), or, at a function's entry,
// from Go's stack check or from a jump back to the entry. An arrival along no
// edge of the graph counts in BlockArrivals. Hit has already pushed or popped
// activations for this trap. It allocates nothing once the cursor has seen the
// function.
func (t *Table) hitBlock(c *Cursor, i int, entry bool, jump int32, u *Undo) {
	b := t.blk
	gb := t.siteBlock[i]
	fn := b.fn[gb]
	u.blk = true
	u.pre = c.pre
	prev := int32(-1)
	var top *activation
	switch {
	case b.flags[gb]&blockPre != 0:
		// Go's stack check runs before the entry site opens the activation,
		// again after each stack growth: its blocks chain through c.pre.
		if c.pre.fn == fn+1 {
			prev = c.pre.block
		}
		c.pre = preBlock{fn: fn + 1, block: gb}
	case entry:
		top = &c.stack[len(c.stack)-1] // just pushed by Hit
		if jump >= 0 {
			prev = jump
		} else if c.pre.fn == fn+1 {
			prev = c.pre.block
		}
		c.pre = preBlock{}
	default:
		if n := len(c.stack); n > 0 && c.stack[n-1].fn == fn {
			top = &c.stack[n-1]
			prev = top.block
			u.blkTop, u.blkUsedTop = top.block, true
		} else if v, ok := c.blk[fn]; ok {
			prev = v
		}
	}
	if e := b.edgeInto(prev, gb); e >= 0 {
		t.cnt.EdgeCounts[e]++
		u.edge = e + 1
	} else {
		t.cnt.BlockArrivals[gb]++
	}
	if top != nil {
		top.block = gb
	}
	if c.blk == nil {
		c.blk = make(map[int32]int32, 8)
	}
	v, ok := c.blk[fn]
	u.blkFallback, u.blkHadFallback = v, ok
	c.blk[fn] = gb
}

// unhitBlock reverses hitBlock, before Unhit pops an activation the hit
// pushed.
func (t *Table) unhitBlock(c *Cursor, u Undo) {
	gb := t.siteBlock[u.site]
	fn := t.blk.fn[gb]
	if u.edge > 0 {
		t.cnt.EdgeCounts[u.edge-1]--
	} else {
		t.cnt.BlockArrivals[gb]--
	}
	if u.blkHadFallback {
		c.blk[fn] = u.blkFallback
	} else {
		delete(c.blk, fn)
	}
	c.pre = u.pre
	if u.blkUsedTop && !u.pushed && len(c.stack) > 0 {
		c.stack[len(c.stack)-1].block = u.blkTop
	}
}
