package breakpoint

import (
	"slices"
	"sort"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

// Short sites: a block too short for a jmp rel32 takes a jmp rel8 to a
// landing, five dead bytes of a host block near it whose code runs in its
// own trampoline (Table.ShortSite).

// planShort plans block site i, too short for a jmp rel32 before a branch
// or the next block (a return site's `leave; ret`, a lone `jmp`), as a short
// site: a 2-byte jmp to a landing in a host block of its function, whose
// whole code runs in its trampoline, leaving its bytes after the first
// jump.JmpLen dead: a jump site of jump.JmpLen+5 to jump.MaxHostLen bytes
// whose landing (its address + jump.JmpLen) is within a jmp rel8 of the site. The block that
// ends where the site starts is tried first, then the others by distance
// (on SQLite, a block of 2 to 4 bytes often follows another as short). It
// reports whether it did.
func (p *Plan) planShort(sym *symtab.File, opt PlanOptions, i int, graphOf map[int32]*cfg.Graph) bool {
	t := p.Table
	fn := t.fn[i]
	g := graphOf[fn]
	if g == nil || t.BlockOf(i) < 0 || fn < 0 || int(fn) >= len(sym.Funcs) {
		return false
	}
	addr := t.addr[i]
	k, ok := blockIndex(g, addr)
	if !ok {
		return false
	}
	f := sym.Funcs[fn]
	end := f.Addr + f.Size
	leader := p.leaderOf(g)
	code, ok := sym.Code(addr, int(min(end-addr, 16)))
	if !ok {
		return false
	}
	js, ok := jump.PlanRun(code, addr, 2, leader)
	if !ok || addr+uint64(js.Len) > end {
		return false
	}
	fcode, _ := sym.Code(f.Addr, int(f.Size))
	keep := !jump.FlagsDead(fcode, f.Addr, addr, 3)
	if keep && !p.keepsFlags(sym, opt, f) {
		return false
	}
	return p.placeShort(sym, g, k, i, js.Len, keep)
}

// hostLanding returns where in host block hb a short site at addr lands:
// the place nearest hb's start, past hb's own jmp and the landings at
// offsets taken, whose 5 bytes end in hb and which a jmp rel8 from addr
// reaches; false when there is none.
func hostLanding(hb cfg.Block, addr uint64, taken []uint64) (uint64, bool) {
	if hb.End < hb.Start+2*jump.JmpLen {
		return 0, false
	}
	hi := int64(hb.End - jump.JmpLen)
	next := int64(addr + 2) // a jmp rel8 counts from its end
	l := max(int64(hb.Start+jump.JmpLen), next-128)
	for moved := true; moved; {
		moved = false
		for _, o := range taken {
			at := int64(hb.Start + o)
			if l < at+jump.JmpLen && at < l+jump.JmpLen {
				l, moved = at+jump.JmpLen, true
			}
		}
	}
	if l > hi || l > next+127 {
		return 0, false
	}
	return uint64(l), true
}

// blockIndex returns the index of the block of g that starts at addr.
func blockIndex(g *cfg.Graph, addr uint64) (int, bool) {
	k := sort.Search(len(g.Blocks), func(k int) bool { return g.Blocks[k].Start >= addr })
	return k, k < len(g.Blocks) && g.Blocks[k].Start == addr
}

// placeShort finds a host for site i, the start of block k of g, as a
// short site that displaces length bytes (keep: with the update that
// keeps the flags), and reports whether it did.
func (p *Plan) placeShort(sym *symtab.File, g *cfg.Graph, k, i, length int, keep bool) bool {
	t := p.Table
	addr := t.addr[i]
	// Hosts by distance from the site, the block right before it first.
	var hosts []int
	for b, hb := range g.Blocks {
		if _, ok := hostLanding(hb, addr, nil); b != k && ok {
			hosts = append(hosts, b)
		}
	}
	dist := func(b int) uint64 {
		if g.Blocks[b].End == addr {
			return 0
		}
		if g.Blocks[b].Start > addr {
			return g.Blocks[b].Start - addr
		}
		return addr - g.Blocks[b].Start
	}
	sort.SliceStable(hosts, func(x, y int) bool { return dist(hosts[x]) < dist(hosts[y]) })
	for _, b := range hosts {
		hb := g.Blocks[b]
		h, ok := t.Index(hb.Start)
		if !ok {
			continue
		}
		l, ok := hostLanding(hb, addr, t.landings(h))
		if !ok {
			continue
		}
		h, n, ok := p.hostOf(sym, g, b, int(l-hb.Start)+jump.JmpLen)
		if !ok {
			continue
		}
		if len(t.jump.hosting[h]) == 0 {
			t.jump.hostLen[h] = t.jump.length[h]
			t.jump.length[h] = uint8(n)
		}
		t.jump.length[i] = uint8(length)
		t.jump.keep[i] = keep
		t.jump.host[i] = h
		t.jump.hosting[h] = append(t.jump.hosting[h], i)
		t.jump.landing[i] = uint8(l - hb.Start)
		return true
	}
	return false
}

// landings returns the offsets of the landings host h holds.
func (t *Table) landings(h int) []uint64 {
	var ls []uint64
	for _, s := range t.jump.hosting[h] {
		ls = append(ls, uint64(t.jump.landing[s]))
	}
	return ls
}

// unshort takes short site i from its host, which plans its own jump
// again once it hosts no other.
func (t *Table) unshort(i int) {
	h, ok := t.jump.host[i]
	if !ok {
		return
	}
	delete(t.jump.host, i)
	delete(t.jump.landing, i)
	rest := slices.DeleteFunc(t.jump.hosting[h], func(s int) bool { return s == i })
	if len(rest) > 0 {
		t.jump.hosting[h] = rest
		return
	}
	delete(t.jump.hosting, h)
	t.jump.length[h] = t.jump.hostLen[h]
}

// hostOf reports whether block b of g can host a short site's landing
// whose end is need bytes into it: a planned jump site, not derived, not
// counting an arc, not short, of at least 2*jump.JmpLen bytes whose code
// can run in its trampoline: the whole block when it has at most
// jump.MaxHostLen bytes, else its instructions through the landing's end
// (a long block that ends in the call before a return site), which must
// be as many bytes at most. It returns the host's site and the length it
// displaces, at least the length it already displaces for the landings it
// holds.
func (p *Plan) hostOf(sym *symtab.File, g *cfg.Graph, b, need int) (h, n int, ok bool) {
	t := p.Table
	hb := g.Blocks[b]
	h, ok = t.Index(hb.Start)
	whole := int(hb.End - hb.Start)
	if !ok || t.jump.length[h] == 0 || t.jump.keep[h] || whole < 2*jump.JmpLen || need > whole || t.jump.derived[h] {
		return 0, 0, false
	}
	if _, arc := t.jump.arcOf[h]; arc {
		return 0, 0, false // its whole block is displaced to count an arc
	}
	if _, short := t.jump.host[h]; short {
		return 0, 0, false
	}
	if len(t.jump.hosting[h]) > 0 {
		need = max(need, int(t.jump.length[h]))
	}
	n = whole
	if whole > jump.MaxHostLen {
		n = need
	}
	hcode, ok := sym.Code(hb.Start, whole)
	if !ok {
		return 0, 0, false
	}
	js, ok := jump.PlanRun(hcode, hb.Start, n, p.leaderOf(g))
	if !ok || js.Len > jump.MaxHostLen || js.Len > whole {
		return 0, 0, false
	}
	return h, js.Len, true
}
