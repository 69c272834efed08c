package breakpoint

import (
	"sort"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// Every block left unplanted is a trampoline run the target does not pay
// for: in a loop, that is most of the in-process engine's cost (a hit is
// two jumps and an add, on a loop body of a few instructions). Once the
// blocks that could not take a jump are derived (deriveBlocks), the
// patchable ones are derived too, as many as keep every edge derivable:
// gcov instruments only the arcs off a spanning tree for the same reason.
// Which to derive first is a static guess at what costs most:
//   - a site whose displaced bytes end in a call: the trampoline emulates
//     the call (push the original return address, jmp), so the callee's
//     ret has no call in the processor's return stack, and mispredicts,
//     with the returns that follow it;
//   - then the innermost loops' blocks (loop depth is the guess of
//     frequency that needs no profile).

// deriveMore extends graph gi's derived blocks with its patchable block
// sites of [fg.Entry, fg.Tail) whose counts follow from the others', and
// returns how many it added, and how many of those were short sites,
// whose hosts are then planned as they were before (a host runs its whole
// block in its trampoline). hosts holds the hosts of short sites, which
// stay planted. Each candidate costs one step of a union-find
// (jump.Growth), so a function of thousands of blocks is no dearer a
// block than a small one.
func (p *Plan) deriveMore(sym *symtab.File, gi int, fg FuncGraph, hosts map[int]bool) (derivedN, unshort int) {
	t := p.Table
	g := fg.Graph
	derived := make([]bool, len(g.Blocks))
	site := make([]int, len(g.Blocks))
	var cand []int
	for b, bl := range g.Blocks {
		i, ok := t.Index(bl.Start)
		site[b] = -1
		if !ok {
			continue
		}
		site[b] = i
		derived[b] = t.jump.derived[i]
		_, arc := t.jump.arcOf[i]
		_, entries := t.entries[i]
		if derived[b] || hosts[i] || arc || entries || t.pinned(i) || t.Kind(i) != KindBlock || t.IsEntry(i) || t.IsNotify(i) ||
			t.JumpLen(i) == 0 || bl.Start < fg.Entry || bl.Start >= fg.Tail {
			continue
		}
		cand = append(cand, b)
	}
	if len(cand) == 0 {
		return 0, 0
	}
	depth := jump.LoopDepth(g)
	// rank: 2 for a site that displaces a call (a short site's host may),
	// 1 for a short site, else 0; higher is derived first.
	rank := map[int]int{}
	keep := cand[:0]
	for _, b := range cand {
		i := site[b]
		h, short := t.jump.host[i]
		switch {
		case p.displacesCall(sym, i) || short && p.displacesCall(sym, h):
			rank[b] = 2
		case short:
			rank[b] = 1
		}
		keep = append(keep, b)
	}
	cand = keep
	sort.SliceStable(cand, func(x, y int) bool {
		a, b := cand[x], cand[y]
		if rank[a] != rank[b] {
			return rank[a] > rank[b]
		}
		return depth[a] > depth[b]
	})
	fs := t.flowOf(gi, g)
	gr, ok := fs.Grow(derived)
	if !ok {
		return 0, 0 // not solvable as it is: more unknowns never are
	}
	for _, b := range cand {
		if !gr.Derive(b) {
			continue
		}
		derived[b] = true
		derivedN++
		if _, ok := t.jump.host[site[b]]; ok {
			t.unshort(site[b])
			t.jump.length[site[b]] = 0
			unshort++
		}
	}
	if derivedN > 0 {
		dp, _ := fs.Solve(derived)
		p.setDerived(gi, derived, site, dp)
	}
	return derivedN, unshort
}

// displacesCall reports whether site i's jump patch displaces a call.
func (p *Plan) displacesCall(sym *symtab.File, i int) bool {
	t := p.Table
	code, ok := sym.Code(t.addr[i], t.JumpLen(i))
	if !ok {
		return false
	}
	for len(code) > 0 {
		inst, err := x86asm.Decode(code, 64)
		if err != nil {
			return false
		}
		if inst.Op == x86asm.CALL {
			return true
		}
		code = code[inst.Len:]
	}
	return false
}
