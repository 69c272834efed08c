package breakpoint

import (
	"bytes"
	"sort"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/breakpoint/relocate"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// A function of fewer bytes than a jmp rel32 (`xor %eax,%eax; ret`, `mov
// %rdi,%rax; ret`: C++'s virtual ToElement and the like, 101,181 calls of
// one in TinyXML-2's xmltest at -O2) has no room for the patch, and no
// block of its own to host a short site's landing. gcc aligns functions
// (to 16 at -O2), so one is followed by padding no code reaches: nops,
// int3 or zeros up to the next symbol. Its patch covers the function and
// the first padding bytes (jump.Site.Dead): the trampoline runs the whole
// function, its return or jump included, and none of the padding, and
// the padding's bytes, part of the patch's original bytes, are put back
// with the function's at every restore. The padding is taken only when
// nothing can reach it: it lies between the function's end (its symbol's
// size) and the next function, holds no symbol, branch target or code
// address found in data (symtab.Targets), no site and no line-table row,
// and every byte of it is padding as assemblers emit it.

// ReasonPaddingChanged is why a site whose patch covers the padding after
// its function is not patched when the bytes there are not the file's
// (relocate.Error.Reason).
const ReasonPaddingChanged = "the padding after the function is not the file's"

// maxPadding bounds the padding read after a function: the largest
// alignment gcc and clang use for functions is 64.
const maxPadding = 64

// planPadding plans site i, the entry of a function shorter than a jmp
// rel32 whose instructions end in a return or jump (jump.ReasonTransfer),
// as a jump site whose patch covers the function and the padding after
// it, and reports whether it did.
func (p *Plan) planPadding(sym *symtab.File, opt PlanOptions, i int, graphOf map[int32]*cfg.Graph) bool {
	t := p.Table
	fn := t.fn[i]
	if fn < 0 || int(fn) >= len(sym.Funcs) || p.targets == nil {
		return false // without the module's targets, nothing is known unreached
	}
	f := sym.Funcs[fn]
	addr := t.addr[i]
	if addr != f.Addr || f.Size < 1 || f.Size >= jump.JmpLen || int(fn)+1 >= len(sym.Funcs) {
		return false
	}
	end, next := f.Addr+f.Size, sym.Funcs[fn+1].Addr
	if next < addr+jump.JmpLen || next-end > maxPadding {
		return false
	}
	fcode, ok := sym.Code(f.Addr, int(f.Size))
	if !ok || !endsInTransfer(fcode) {
		return false
	}
	leader := p.targets.Has
	if g := graphOf[fn]; g != nil {
		leader = p.leaderOf(g)
	}
	if js, ok := jump.PlanRun(fcode, addr, int(f.Size), leader); !ok || js.Len != int(f.Size) {
		return false
	}
	pad, ok := sym.Code(end, int(next-end))
	if !ok || !IsPadding(pad) || p.targets.Has(end) || p.targets.Within(end, next) || p.sitesIn(addr+1, next) || p.rowsIn(end, next) {
		return false
	}
	keep := !jump.FlagsDead(fcode, f.Addr, addr, 3)
	if keep && !p.keepsFlags(sym, opt, f) {
		return false
	}
	dead := jump.JmpLen - int(f.Size)
	if t.jump.pad == nil {
		t.jump.pad = map[int][]byte{}
	}
	t.jump.pad[i] = bytes.Clone(pad[:dead])
	t.jump.length[i] = jump.JmpLen
	t.jump.keep[i] = keep
	return true
}

// endsInTransfer reports whether code's last instruction, decoded from its
// start, is a return or an unconditional jump: nothing after it runs.
func endsInTransfer(code []byte) bool {
	var last x86asm.Op
	for off := 0; off < len(code); {
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			return false
		}
		last = inst.Op
		off += inst.Len
	}
	return last == x86asm.RET || last == x86asm.JMP
}

// sitesIn reports whether a site of the table lies in [lo, hi).
func (p *Plan) sitesIn(lo, hi uint64) bool {
	a := p.Table.addr
	k := sort.Search(len(a), func(k int) bool { return a[k] >= lo })
	return k < len(a) && a[k] < hi
}

// rowsIn reports whether a line-table row the plan dropped lies in
// [lo, hi): one outside any function, which the padding must not hold.
func (p *Plan) rowsIn(lo, hi uint64) bool {
	for _, d := range p.Dropped {
		if d.Addr >= lo && d.Addr < hi {
			return true
		}
	}
	return false
}

// IsPadding reports whether code is all padding as assemblers emit it
// between functions: one-byte nops (90), the multi-byte nop forms (0f 1f
// /0 with any 66 and segment prefixes, 66 90), int3 (cc) or zeros.
func IsPadding(code []byte) bool {
	for off := 0; off < len(code); {
		switch code[off] {
		case 0x90, relocate.Int3, 0x00:
			off++
			continue
		}
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil || !isNop(code[off:off+inst.Len], inst) {
			return false
		}
		off += inst.Len
	}
	return true
}

// isNop reports whether inst, whose bytes are b, is a nop form: 0f 1f /0
// (Intel SDM vol. 2, NOP) or 90 after operand-size prefixes (xchg %ax,%ax
// to a disassembler), with only 66 and 2e prefixes before it.
func isNop(b []byte, inst x86asm.Inst) bool {
	k := 0
	for k < len(b) && (b[k] == 0x66 || b[k] == 0x2e) {
		k++
	}
	switch {
	case k+1 == len(b) && b[k] == 0x90:
		return true
	case k+2 <= len(b) && b[k] == 0x0f && b[k+1] == 0x1f:
		return inst.Op == x86asm.NOP
	}
	return false
}

// PaddingBytes returns the file's bytes of the padding that site i's patch
// covers after its function (planPadding), nil for a site whose patch
// lies within its function.
func (t *Table) PaddingBytes(i int) []byte {
	if t.jump == nil {
		return nil
	}
	return t.jump.pad[i]
}
