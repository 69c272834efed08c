package breakpoint

import (
	"bytes"
	"fmt"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/breakpoint/relocate"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

// Blocks displaced whole (jump.WholeBlock) are planned by the flow graph
// alone; whether their instructions run out of line is read when a site is
// patched (Table.BuildTrampoline), which falls back to the shortest patch.

// planTails gives a trampoline that runs its block whole and then goes on
// into the next block by fall-through (its conditional jump not taken, or
// no jump) that next block's code too, when no site counts there (a block
// whose count is derived, or one no mode counts, as under --funcs): the
// thread skips the jump back to original code and, when that block ends in
// a jump to a patched site, the jump into its patch too. fib's base case
// (`mov; cltq; jmp` to the epilogue) runs in the entry's trampoline, whose
// exit goes straight to the epilogue's trampoline. The tail is not
// patched: other paths reach it in original code, where it stays intact.
// It returns the tail's length per site.
func (p *Plan) planTails(sym *symtab.File, graphOf map[int32]*cfg.Graph) map[int]uint8 {
	tails := map[int]uint8{}
	p.planTailsIn(sym, graphOf, 0, len(p.Table.addr), tails)
	return tails
}

// planTailsIn plans the tails of sites [lo, hi) into tails.
func (p *Plan) planTailsIn(sym *symtab.File, graphOf map[int32]*cfg.Graph, lo, hi int, tails map[int]uint8) {
	t := p.Table
	for i := lo; i < hi; i++ {
		n := t.jump.length[i]
		if n == 0 || t.jump.least[i] == 0 || t.jump.derived[i] || t.jump.reasons[i] != "" {
			continue // not displaced whole
		}
		if _, short := t.jump.host[i]; short {
			continue
		}
		if _, arc := t.jump.arcOf[i]; arc {
			continue
		}
		g := graphOf[t.fn[i]]
		if g == nil {
			continue
		}
		addr := t.addr[i]
		next := addr + uint64(n)
		if w, falls := jump.WholeBlock(g, addr); w != int(n) || !falls {
			continue
		}
		if s, ok := t.Index(next); ok && !t.jump.derived[s] {
			continue // counted there: the thread must reach its patch
		}
		if b, _ := jump.BlockAt(g, addr); b.Term == cfg.TermCond && !plainJccAt(sym, b.Last) {
			continue // loop, jrcxz, xbegin: not a jcc whose jump back can go
		}
		m, _ := jump.WholeBlock(g, next)
		if m == 0 || int(n)+m > jump.MaxHostLen {
			continue
		}
		tails[i] = uint8(m)
	}
}

// plainJccAt reports whether the instruction at addr is a jcc without
// prefixes (jump.PlainJcc).
func plainJccAt(sym *symtab.File, addr uint64) bool {
	code, ok := sym.Code(addr, 2)
	return ok && jump.PlainJcc(code)
}

// BuildTrampoline builds the trampoline of site i at runtime address at,
// from code, the site's current original bytes (from the site on, at least
// jump.MaxHostLen of them or to the end of the mapping): the planned patch
// with its tail; failing that (an instruction that does not run out of
// line, or does not end where the plan says), without the tail; failing
// that, for a block planned whole, the shortest patch. edges are the arcs its
// trampoline counts, none for a site displaced whole by this file (they
// need the planned block). It returns the first error when none can be
// built, or false when site i takes no jump.
func (t *Table) BuildTrampoline(i int, code []byte, at uint64, counter uint32, edges []jump.EdgeCount) (*jump.Trampoline, error) {
	n := t.JumpLen(i)
	if n == 0 {
		return nil, fmt.Errorf("breakpoint: site %d takes no jump", i)
	}
	addr := t.addr[i] + t.bias
	js := jump.Site{Len: n, Tail: int(t.jump.tail[i]), Edges: edges, KeepFlags: t.KeepFlags(i)}
	js.Pend, js.Entry = t.callSite(i, counter)
	js.TableEntry = t.entryCount(i, counter)
	if len(code) < js.Len+js.Tail {
		js.Tail = 0
	}
	if pad := t.jump.pad[i]; pad != nil {
		// The padding after a function the patch covers must be the
		// file's: bytes the program wrote there may be code it runs.
		js.Dead = len(pad)
		if len(code) < n || !bytes.Equal(code[n-len(pad):n], pad) {
			return nil, &relocate.Error{Addr: addr + uint64(n-len(pad)), Bytes: bytes.Clone(code[min(n-len(pad), len(code)):min(n, len(code))]), Reason: ReasonPaddingChanged}
		}
	}
	tr, err := jump.BuildTrampoline(code, addr, at, js, counter)
	if err != nil && js.Entry != nil {
		// No room for the entry check: its indirect callers go
		// unknown, the entry still counts.
		js.Entry = nil
		tr, err = jump.BuildTrampoline(code, addr, at, js, counter)
	}
	if err == nil || len(edges) > 0 {
		return tr, err
	}
	if js.Tail > 0 {
		js.Tail = 0
		if tr, e := jump.BuildTrampoline(code, addr, at, js, counter); e == nil {
			return tr, nil
		}
	}
	if least := int(t.jump.least[i]); least > 0 {
		js.Len = least
		if tr, e := jump.BuildTrampoline(code, addr, at, js, counter); e == nil {
			return tr, nil
		}
	}
	return nil, err
}
