package unwind

import (
	"encoding/binary"
	"errors"

	"github.com/go-delve/delve/pkg/dwarf/frame"
)

// ErrNoCFI is returned by Load for a module without call frame
// information: its frames cannot be walked by CFI.
var ErrNoCFI = errors.New("no .eh_frame")

// DWARF register numbers on x86-64 (System V psABI, "DWARF Register
// Number Mapping").
const (
	regBP = 6
	regSP = 7
)

// A Table is one module's call frame information: its frame description
// entries at link-time addresses, sorted.
type Table struct {
	fdes frame.FrameDescriptionEntries
	segs []segment // the executable segments (LinkAddr)
}

// Len returns the number of functions the table describes.
func (t *Table) Len() int { return len(t.fdes) }

// Regs are the registers a walk starts from: the sampled instruction, stack
// and frame pointers.
type Regs struct{ IP, SP, BP uint64 }

// A Stack is a copy of a thread's stack: Data is the memory from runtime
// address Base up.
type Stack struct {
	Base uint64
	Data []byte
}

// word returns the 8 bytes at runtime address a, false when they are not
// all in the copy.
func (s Stack) word(a uint64) (uint64, bool) {
	if a < s.Base || a-s.Base > uint64(len(s.Data)) || uint64(len(s.Data))-(a-s.Base) < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(s.Data[a-s.Base:]), true
}

// Find maps a runtime address to the Table of the module holding it and
// the address's link-time value there; ok false when no module with CFI
// holds it.
type Find func(pc uint64) (t *Table, link uint64, ok bool)

// Walk returns the return addresses of the thread whose registers were r
// and whose stack s holds, innermost first, appended to out (at most max
// of them). complete is true when the walk reached the outermost frame
// (one whose return address the CFI leaves undefined, or 0); false when it
// stopped where it could not go on: a frame in no module find knows or
// with no rule for it, a rule it does not follow (a DWARF expression), a
// saved value outside the copy of the stack, or a frame that would not
// move up the stack. It never guesses: every address it returns was read
// where a rule says a return address is.
func Walk(r Regs, s Stack, find Find, max int, out []uint64) (_ []uint64, complete bool) {
	defer func() {
		// delve's frame programs index what the module's CFI says
		// without checks of their own: damaged CFI ends the walk.
		if recover() != nil {
			complete = false
		}
	}()
	pc, sp, bp, bpKnown := r.IP, r.SP, r.BP, true
	for n := 0; n < max; n++ {
		// A caller's return address follows its call: the call itself,
		// whose rules are the ones in force during the call, is before it.
		q := pc
		if n > 0 {
			q--
		}
		t, link, ok := find(q)
		if !ok || t == nil {
			return out, false
		}
		fde, err := t.fdes.FDEForPC(link)
		if err != nil {
			return out, false
		}
		fc, err := fde.EstablishFrame(link)
		if err != nil {
			return out, false
		}
		var cfa uint64
		switch {
		case fc.CFA.Rule == frame.RuleExpression:
			if cfa, ok = cfaExpr(fc.CFA.Expression, pc, sp); !ok {
				return out, false
			}
		case fc.CFA.Rule != frame.RuleCFA:
			return out, false
		case fc.CFA.Reg == regSP:
			cfa = sp + uint64(fc.CFA.Offset)
		case fc.CFA.Reg == regBP:
			if !bpKnown {
				return out, false
			}
			cfa = bp + uint64(fc.CFA.Offset)
		default:
			return out, false
		}
		if cfa <= sp {
			return out, false
		}
		ra, done, ok := saved(fc.Regs[fc.RetAddrReg], cfa, s)
		if !ok {
			return out, false
		}
		if done || ra == 0 {
			return out, true
		}
		switch rule := fc.Regs[regBP]; rule.Rule {
		case frame.RuleUndefined, frame.RuleSameVal:
		case frame.RuleOffset:
			v, ok := s.word(cfa + uint64(rule.Offset))
			bp, bpKnown = v, ok
		case frame.RuleValOffset:
			bp = cfa + uint64(rule.Offset)
		default:
			bpKnown = false
		}
		out = append(out, ra)
		pc, sp = ra, cfa
	}
	return out, false
}

// cfaExpr evaluates a DWARF expression that gives a frame's CFA from its
// stack pointer and instruction pointer (pc, sp): the form the linker
// writes for a PLT, whose stubs move the stack pointer by where in the
// stub the thread is (rsp + 8 + ((rip & 15) >= 11) * 8). It follows the
// operations such an expression needs (DWARF 5, 2.5.1: breg of rsp or
// rip, literals, and, ge, shl, plus, plus_uconst, constu) and refuses
// any other: false.
func cfaExpr(expr []byte, pc, sp uint64) (uint64, bool) {
	var st []uint64
	pop2 := func() (uint64, uint64, bool) {
		if len(st) < 2 {
			return 0, 0, false
		}
		a, b := st[len(st)-2], st[len(st)-1]
		st = st[:len(st)-2]
		return a, b, true
	}
	for k := 0; k < len(expr); {
		op := expr[k]
		k++
		switch {
		case op >= 0x30 && op <= 0x4f: // DW_OP_lit0..31
			st = append(st, uint64(op-0x30))
		case op == 0x77 || op == 0x80: // DW_OP_breg7 (rsp), DW_OP_breg16 (rip)
			off, n := sleb(expr[k:])
			if n == 0 {
				return 0, false
			}
			k += n
			base := sp
			if op == 0x80 {
				base = pc
			}
			st = append(st, base+uint64(off))
		case op == 0x10 || op == 0x23: // DW_OP_constu, DW_OP_plus_uconst
			v, n := uleb(expr[k:])
			if n == 0 {
				return 0, false
			}
			k += n
			if op == 0x10 {
				st = append(st, v)
			} else if len(st) > 0 {
				st[len(st)-1] += v
			} else {
				return 0, false
			}
		case op == 0x1a || op == 0x2a || op == 0x24 || op == 0x22: // and, ge, shl, plus
			a, b, ok := pop2()
			if !ok {
				return 0, false
			}
			var v uint64
			switch op {
			case 0x1a:
				v = a & b
			case 0x2a:
				if int64(a) >= int64(b) {
					v = 1
				}
			case 0x24:
				v = a << (b & 63)
			case 0x22:
				v = a + b
			}
			st = append(st, v)
		default:
			return 0, false
		}
	}
	if len(st) != 1 {
		return 0, false
	}
	return st[0], true
}

// uleb and sleb decode a LEB128 number at the start of b, and its length;
// 0 when b ends first.
func uleb(b []byte) (uint64, int) {
	var v uint64
	for k := 0; k < len(b) && k < 10; k++ {
		v |= uint64(b[k]&0x7f) << (7 * k)
		if b[k]&0x80 == 0 {
			return v, k + 1
		}
	}
	return 0, 0
}

func sleb(b []byte) (int64, int) {
	var v int64
	for k := 0; k < len(b) && k < 10; k++ {
		v |= int64(b[k]&0x7f) << (7 * k)
		if b[k]&0x80 == 0 {
			if k < 9 && b[k]&0x40 != 0 {
				v |= -1 << (7 * (k + 1))
			}
			return v, k + 1
		}
	}
	return 0, 0
}

// saved returns the value rule says a register held in the caller, the
// register saved at an offset from cfa: done when the rule leaves it
// undefined (the outermost frame's return address); ok false when the
// rule is one Walk does not follow or the value is not in s.
func saved(rule frame.DWRule, cfa uint64, s Stack) (v uint64, done, ok bool) {
	switch rule.Rule {
	case frame.RuleUndefined:
		return 0, true, true
	case frame.RuleOffset:
		v, ok := s.word(cfa + uint64(rule.Offset))
		return v, false, ok
	}
	return 0, false, false
}
