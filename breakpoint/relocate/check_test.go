package relocate

// checkDisplaced and its parts: an independent check that a displaced
// instruction does what the original did, decoding the slot with x86asm.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// unknownToX86asm returns the length of an instruction at the start of code
// that x86asm cannot decode or decodes wrong, 0 for others.
func unknownToX86asm(code []byte) int {
	switch {
	case symtab.IsENDBR(code):
		return 4
	case symtab.IsVZERO(code):
		return 3
	}
	return 0
}

// A step is one instruction of a slot's code, decoded.
type step struct {
	off  int
	pc   uint64
	inst x86asm.Inst
	raw  []byte
}

func decodeSlot(d *Displaced) ([]step, error) {
	var steps []step
	for off := 0; off < len(d.Code); {
		pc := d.Slot + uint64(off)
		if n := unknownToX86asm(d.Code[off:]); n > 0 {
			steps = append(steps, step{off: off, pc: pc, raw: d.Code[off : off+n]})
			off += n
			continue
		}
		inst, err := x86asm.Decode(d.Code[off:], 64)
		if err != nil || inst.Op == 0 {
			return nil, fmt.Errorf("slot code %x does not decode at +%d: %v", d.Code, off, err)
		}
		steps = append(steps, step{off: off, pc: pc, inst: inst, raw: d.Code[off : off+inst.Len]})
		off += inst.Len
	}
	return steps, nil
}

// relTarget returns the absolute target of a direct branch at pc.
func relTarget(inst x86asm.Inst, pc uint64) (uint64, bool) {
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok {
		return 0, false
	}
	return pc + uint64(inst.Len) + uint64(int64(rel)), true
}

// ripEA returns the absolute address of raw's RIP-relative operand at pc,
// read from the encoding (x86asm's AVX decoder hides it).
func ripEA(raw []byte, pc uint64) (uint64, bool) {
	l, reason := scanLayout(raw)
	if reason != "" || !l.rip {
		return 0, false
	}
	disp := int64(int32(binary.LittleEndian.Uint32(raw[l.modrm+1:])))
	return pc + uint64(len(raw)) + uint64(disp), true
}

// sameButDisp reports whether a and b are equal except for the 4 bytes of a
// RIP-relative displacement, and whether both address the same memory when
// a runs at pcA and b at pcB.
func sameOperand(a []byte, pcA uint64, b []byte, pcB uint64) error {
	if len(a) != len(b) {
		return fmt.Errorf("copy %x has another length than %x", b, a)
	}
	eaA, ripA := ripEA(a, pcA)
	eaB, ripB := ripEA(b, pcB)
	if ripA != ripB {
		return fmt.Errorf("copy %x rip-relative %v, original %x %v", b, ripB, a, ripA)
	}
	if !ripA {
		if !bytes.Equal(a, b) {
			return fmt.Errorf("copy %x differs from %x", b, a)
		}
		return nil
	}
	if eaA != eaB {
		return fmt.Errorf("copy %x at %#x addresses %#x, original at %#x addresses %#x", b, pcB, eaB, pcA, eaA)
	}
	l, _ := scanLayout(a)
	d := l.modrm + 1
	if !bytes.Equal(a[:d], b[:d]) || !bytes.Equal(a[d+4:], b[d+4:]) {
		return fmt.Errorf("copy %x differs from %x outside the displacement", b, a)
	}
	return nil
}

// checkDisplaced checks, by decoding, that d's code does what the original
// instruction did at d.Addr: the same operation on the same absolute
// addresses, branches to the same absolute targets, the original return
// address pushed by an emulated call, no instruction added that writes the
// flags or a register other than RSP, and resume points that are exact.
func checkDisplaced(orig []byte, d *Displaced) error {
	if len(d.Code) > MaxSlot {
		return fmt.Errorf("code %x is %d bytes, more than MaxSlot", d.Code, len(d.Code))
	}
	if d.Len <= 0 || d.Len > len(orig) {
		return fmt.Errorf("Len %d outside the input's %d bytes", d.Len, len(orig))
	}
	orig = orig[:d.Len]
	next := d.Addr + uint64(d.Len)
	steps, err := decodeSlot(d)
	if err != nil {
		return err
	}
	if to, ok := d.Resume(d.Slot); !ok || to != d.Addr {
		return fmt.Errorf("Resume(Slot) = %#x, %v; want Addr", to, ok)
	}
	// Every instruction but the copied one must leave the flags and every
	// register but RSP alone.
	for i, s := range steps {
		copied := d.Form == FormCopy || d.Form == FormTransfer || d.Form == FormLoop
		if i == 0 && copied {
			continue
		}
		switch s.inst.Op {
		case x86asm.JMP, x86asm.MOV, x86asm.LEA:
		case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE, x86asm.JL,
			x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS:
		default:
			return fmt.Errorf("added instruction %v at +%d", s.inst, s.off)
		}
		if s.inst.Op == x86asm.MOV {
			if m, ok := s.inst.Args[0].(x86asm.Mem); !ok || m.Base != x86asm.RSP {
				return fmt.Errorf("added %v writes something other than the stack", s.inst)
			}
		}
		if s.inst.Op == x86asm.LEA && s.inst.Args[0] != x86asm.RSP {
			return fmt.Errorf("added %v writes a register other than rsp", s.inst)
		}
	}
	jmpTo := func(s step, want uint64) error {
		if s.inst.Op != x86asm.JMP {
			return fmt.Errorf("at +%d: %v, want jmp %#x", s.off, s.inst, want)
		}
		if t, ok := relTarget(s.inst, s.pc); !ok || t != want {
			return fmt.Errorf("at +%d: jmp to %#x, want %#x", s.off, t, want)
		}
		return nil
	}
	resumeAt := func(s step, want uint64) error {
		if to, ok := d.Resume(s.pc); !ok || to != want {
			return fmt.Errorf("Resume(slot+%d) = %#x, %v; want %#x", s.off, to, ok, want)
		}
		return nil
	}

	if n := unknownToX86asm(orig); n > 0 {
		if d.Form != FormCopy || len(steps) != 2 || !bytes.Equal(steps[0].raw, orig[:n]) {
			return fmt.Errorf("%x relocated as %v %x", orig[:n], d.Form, d.Code)
		}
		return errors.Join(jmpTo(steps[1], next), resumeAt(steps[1], next))
	}
	oi, err := x86asm.Decode(orig, 64)
	if err != nil {
		return fmt.Errorf("original does not decode: %v", err)
	}
	switch d.Form {
	case FormCopy, FormTransfer:
		want := 2
		if d.Form == FormTransfer {
			want = 1
		}
		if len(steps) != want {
			return fmt.Errorf("%v: %d instructions in %x", d.Form, len(steps), d.Code)
		}
		if steps[0].inst.Op != oi.Op {
			return fmt.Errorf("copied %v, original %v", steps[0].inst, oi)
		}
		if err := sameOperand(orig, d.Addr, steps[0].raw, d.Slot); err != nil {
			return err
		}
		if d.Form == FormCopy {
			return errors.Join(jmpTo(steps[1], next), resumeAt(steps[1], next))
		}
		return nil

	case FormJump:
		t, _ := relTarget(oi, d.Addr)
		if len(steps) != 1 {
			return fmt.Errorf("jump: %x", d.Code)
		}
		return jmpTo(steps[0], t)

	case FormCond:
		t, _ := relTarget(oi, d.Addr)
		if len(steps) != 2 || steps[0].inst.Op != oi.Op {
			return fmt.Errorf("cond: %x for %v", d.Code, oi)
		}
		if got, _ := relTarget(steps[0].inst, steps[0].pc); got != t || steps[0].inst.PCRel != 4 {
			return fmt.Errorf("cond: %v goes to %#x, want %#x", steps[0].inst, got, t)
		}
		return errors.Join(jmpTo(steps[1], next), resumeAt(steps[1], next))

	case FormLoop:
		t, _ := relTarget(oi, d.Addr)
		if len(steps) != 4 || steps[0].inst.Op != oi.Op || steps[0].inst.Len != oi.Len || !bytes.Equal(steps[0].raw[:oi.Len-1], orig[:oi.Len-1]) {
			return fmt.Errorf("loop: %x for %v", d.Code, oi)
		}
		// Taken: to the instruction that jumps to the target. Not taken:
		// the next instruction skips it to the jump back.
		taken, _ := relTarget(steps[0].inst, steps[0].pc)
		skip, _ := relTarget(steps[1].inst, steps[1].pc)
		if taken != steps[2].pc || steps[1].inst.Op != x86asm.JMP || skip != steps[3].pc {
			return fmt.Errorf("loop: %x: taken to %#x, skip to %#x", d.Code, taken, skip)
		}
		return errors.Join(jmpTo(steps[2], t), jmpTo(steps[3], next),
			resumeAt(steps[1], next), resumeAt(steps[2], t), resumeAt(steps[3], next))

	case FormCall:
		if len(steps) != 4 {
			return fmt.Errorf("call: %x", d.Code)
		}
		lo, hi := steps[0].inst, steps[1].inst
		m0, _ := lo.Args[0].(x86asm.Mem)
		m1, _ := hi.Args[0].(x86asm.Mem)
		i0, _ := lo.Args[1].(x86asm.Imm)
		i1, _ := hi.Args[1].(x86asm.Imm)
		if lo.Op != x86asm.MOV || hi.Op != x86asm.MOV || m0.Disp != -8 || m1.Disp != -4 || lo.MemBytes != 4 || hi.MemBytes != 4 ||
			uint64(uint32(i0))|uint64(uint32(i1))<<32 != next {
			return fmt.Errorf("call: %v; %v do not store %#x at [rsp-8]", lo, hi, next)
		}
		lea := steps[2].inst
		if m, ok := lea.Args[1].(x86asm.Mem); lea.Op != x86asm.LEA || !ok || m.Base != x86asm.RSP || m.Disp != -8 || m.Index != 0 || lea.DataSize != 64 {
			return fmt.Errorf("call: %v does not lower rsp by 8", lea)
		}
		if err := errors.Join(resumeAt(steps[1], d.Addr), resumeAt(steps[2], d.Addr)); err != nil {
			return err
		}
		j := steps[3]
		if t, ok := relTarget(oi, d.Addr); ok {
			return errors.Join(jmpTo(j, t), resumeAt(j, t))
		}
		if _, ok := d.Resume(j.pc); ok {
			return fmt.Errorf("call: an indirect jmp has a resume point")
		}
		if j.inst.Op != x86asm.JMP {
			return fmt.Errorf("call: %v, want an indirect jmp", j.inst)
		}
		switch a := oi.Args[0].(type) {
		case x86asm.Reg:
			if j.inst.Args[0] != a {
				return fmt.Errorf("call %v became jmp %v", a, j.inst.Args[0])
			}
		case x86asm.Mem:
			b, ok := j.inst.Args[0].(x86asm.Mem)
			if !ok || a.Segment != b.Segment || a.Base != b.Base || a.Index != b.Index || a.Scale != b.Scale && a.Index != 0 {
				return fmt.Errorf("call %v became jmp %v", oi, j.inst)
			}
			switch {
			case a.Base == x86asm.RIP:
				eaA := d.Addr + uint64(d.Len) + uint64(a.Disp)
				eaB := j.pc + uint64(j.inst.Len) + uint64(b.Disp)
				if eaA != eaB {
					return fmt.Errorf("call through %#x became jmp through %#x", eaA, eaB)
				}
			case a.Base == x86asm.RSP:
				if b.Disp != a.Disp+8 {
					return fmt.Errorf("call %v became jmp %v: rsp moved by 8", oi, j.inst)
				}
			case a.Disp != b.Disp:
				return fmt.Errorf("call %v became jmp %v", oi, j.inst)
			}
		default:
			return fmt.Errorf("call with operand %v", oi.Args[0])
		}
		return nil
	}
	return fmt.Errorf("unknown form %v", d.Form)
}
