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
		if err != nil || fc.CFA.Rule != frame.RuleCFA {
			return out, false
		}
		var cfa uint64
		switch fc.CFA.Reg {
		case regSP:
			cfa = sp + uint64(fc.CFA.Offset)
		case regBP:
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
