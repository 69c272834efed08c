package cfg

import "sort"

// graph cuts the decoded instructions into blocks and records their edges
// in b.g.
func (b *builder) graph() {
	g := &Graph{Name: b.o.Name, Addr: b.o.Addr, End: b.end}
	b.cutBlocks(g)
	b.addEdges(g)
	sort.Slice(b.calls, func(i, j int) bool { return b.calls[i].Addr < b.calls[j].Addr })
	g.Calls = b.calls
	for i := range g.Calls {
		g.Calls[i].Block, _ = g.BlockAt(g.Calls[i].Addr)
	}
	g.Tables = g.Tables[:0]
	for _, off := range b.inds {
		if t := b.table[off]; t != nil {
			g.Tables = append(g.Tables, *t)
		}
	}
	sort.Slice(g.Tables, func(i, j int) bool { return g.Tables[i].Jump < g.Tables[j].Jump })
	b.g = g
}

// cutBlocks fills g.Blocks: a block starts at a leader or after an
// instruction that ends one, and at the first instruction after a gap. The
// blocks are counted first, so that g.Blocks is allocated once and cur
// stays valid while the block grows.
func (b *builder) cutBlocks(g *Graph) {
	code := b.o.Code
	nb := 0
	prevEnds := true // the previous instruction ends a block (or there is none)
	for off := 0; off < len(code); {
		k := b.kind[off]
		if k == kNone {
			off++
			prevEnds = true
			continue
		}
		if prevEnds || b.flag[off]&fLeader != 0 {
			nb++
		}
		n := b.instLen(off)
		prevEnds = b.ends(k)
		off += n
	}
	g.Blocks = make([]Block, 0, nb)
	var cur *Block
	prevEnds = true
	for off := 0; off < len(code); {
		k := b.kind[off]
		if k == kNone {
			off++
			prevEnds = true
			continue
		}
		addr := b.o.Addr + uint64(off)
		if prevEnds || b.flag[off]&fLeader != 0 {
			g.Blocks = append(g.Blocks, Block{Start: addr, Landing: b.flag[off]&fLanding != 0})
			cur = &g.Blocks[len(g.Blocks)-1]
		}
		n := b.instLen(off)
		cur.Insts++
		cur.Last = addr
		cur.End = addr + uint64(n)
		prevEnds = b.ends(k)
		off += n
	}
}

// addEdges fills g.Edges, block by block in address order, from how each
// block's last instruction leaves it. A target inside the function that is
// not yet a block start gets no edge: it was found this round, and the
// next round's graph has it.
func (b *builder) addEdges(g *Graph) {
	jumpAt := make(map[uint32]uint64, len(b.jumps))
	for _, j := range b.jumps {
		jumpAt[j.off] = j.target
	}
	g.Edges = make([]Edge, 0, 2*len(g.Blocks))
	for i := range g.Blocks {
		bl := &g.Blocks[i]
		bl.firstEdge = int32(len(g.Edges))
		last := uint32(bl.Last - b.o.Addr)
		add := func(kind EdgeKind, target uint64) {
			to := Outside
			if _, ok := b.inside(target); ok {
				j, ok := g.BlockAt(target)
				if !ok || g.Blocks[j].Start != target {
					return // not yet a block start: a later round adds it
				}
				to = j
			}
			for _, e := range g.Edges[bl.firstEdge:] {
				if e.To == to && e.Target == target {
					return // one edge per successor
				}
			}
			g.Edges = append(g.Edges, Edge{From: i, To: to, Kind: kind, Target: target})
		}
		switch b.kind[last] {
		case kCall, kCallInd:
			if b.o.SplitCalls {
				bl.Term = TermCall
				add(Return, bl.End)
			} else {
				bl.Term = TermFall
				add(Fallthrough, bl.End)
			}
		case kPlain:
			bl.Term = TermFall
			add(Fallthrough, bl.End)
		case kJcc:
			bl.Term = TermCond
			add(Taken, jumpAt[last])
			add(Fallthrough, bl.End)
		case kJmp:
			bl.Term = TermJump
			if _, ok := b.inside(jumpAt[last]); !ok {
				bl.Term = TermTailCall
			}
			add(Taken, jumpAt[last])
		case kJmpInd:
			if t := b.table[last]; t != nil {
				bl.Term = TermTable
				for _, target := range t.Targets {
					add(JumpTable, target)
				}
			} else {
				// A tail call through memory or a function pointer; in a
				// round that has not read the jump yet, a placeholder.
				bl.Term = TermTailCall
			}
		case kRet:
			bl.Term = TermReturn
		case kCallNR:
			bl.Term = TermNoReturn
		case kTrap:
			bl.Term = TermTrap
		}
		bl.numEdges = int32(len(g.Edges)) - bl.firstEdge
	}
}

// ends reports whether an instruction of kind k ends its block.
func (b *builder) ends(k uint8) bool {
	return k >= kCallNR || (b.o.SplitCalls && (k == kCall || k == kCallInd))
}

// instLen returns the length of the instruction starting at off.
func (b *builder) instLen(off int) int {
	n := 1
	for off+n < len(b.back) && b.back[off+n] == uint8(n+1) {
		n++
	}
	return n
}
