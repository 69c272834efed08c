package jump

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// flagFree are the only instructions the counter update that keeps the
// flags may use: none writes RFLAGS (Intel SDM vol. 2, LEA, MOV, PUSH,
// POP: "Flags Affected: None").
var flagFree = map[x86asm.Op]bool{
	x86asm.LEA:  true,
	x86asm.MOV:  true,
	x86asm.PUSH: true,
	x86asm.POP:  true,
}

// keepMachine runs the counter update's instructions as the processor
// would, over the few registers and the memory they touch: a check of
// the encoding that does not trust the encoder's comments.
type keepMachine struct {
	t      *testing.T
	reg    map[x86asm.Reg]uint64
	gsBase uint64
	mem    map[uint64]uint64 // 8-byte words
}

func (m *keepMachine) addr(a x86asm.Mem, lea bool) uint64 {
	if a.Index != 0 || (a.Base != 0 && a.Base != x86asm.RSP && a.Base != x86asm.RAX) {
		m.t.Fatalf("unexpected operand %v", a)
	}
	v := uint64(a.Disp)
	if a.Base != 0 {
		v += m.reg[a.Base]
	}
	if a.Segment == x86asm.GS && !lea {
		v += m.gsBase
	} else if a.Segment != 0 {
		m.t.Fatalf("unexpected segment in %v", a)
	}
	return v
}

func (m *keepMachine) step(inst x86asm.Inst) {
	// x86asm gives push and pop the default operand size; in 64-bit mode
	// they move 8 bytes (Intel SDM vol. 2, PUSH).
	if inst.DataSize != 64 && inst.Op != x86asm.PUSH && inst.Op != x86asm.POP {
		m.t.Fatalf("%v: %d-bit operation", inst, inst.DataSize)
	}
	switch inst.Op {
	case x86asm.LEA:
		m.reg[inst.Args[0].(x86asm.Reg)] = m.addr(inst.Args[1].(x86asm.Mem), true)
	case x86asm.MOV:
		switch dst := inst.Args[0].(type) {
		case x86asm.Reg:
			m.reg[dst] = m.mem[m.addr(inst.Args[1].(x86asm.Mem), false)]
		case x86asm.Mem:
			m.mem[m.addr(dst, false)] = m.reg[inst.Args[1].(x86asm.Reg)]
		}
	case x86asm.PUSH:
		m.reg[x86asm.RSP] -= 8
		m.mem[m.reg[x86asm.RSP]] = m.reg[inst.Args[0].(x86asm.Reg)]
	case x86asm.POP:
		m.reg[inst.Args[0].(x86asm.Reg)] = m.mem[m.reg[x86asm.RSP]]
		m.reg[x86asm.RSP] += 8
	default:
		m.t.Fatalf("unexpected %v", inst)
	}
}

// TestKeepCounter decodes the update that keeps the flags, runs it, and
// checks at each of its instructions that Where and Rewind put a thread
// there back at the site as it was.
func TestKeepCounter(t *testing.T) {
	const addr, at, ctr = 0x401000, 0x7f0000, 0x18
	const sp, rax, gs = 0x7ffe0000, 0x1234, 0x500000
	code := hexCode(t, "d3e0 85c0 7e10") // shl %cl,%eax; test; jle: as at zlib's sites
	js := Plan(code, addr, Options{})
	if js.Len == 0 {
		t.Fatalf("not a jump site: %s", js.Reason)
	}
	js.KeepFlags = true
	tr, err := BuildTrampoline(code, addr, at, js, ctr)
	if err != nil {
		t.Fatal(err)
	}
	m := &keepMachine{t: t, reg: map[x86asm.Reg]uint64{x86asm.RSP: sp, x86asm.RAX: rax}, gsBase: gs, mem: map[uint64]uint64{gs + ctr: 41}}
	wantOps := []x86asm.Op{x86asm.LEA, x86asm.PUSH, x86asm.MOV, x86asm.LEA, x86asm.MOV, x86asm.POP, x86asm.LEA}
	off := 0
	for k, want := range wantOps {
		pc := at + uint64(off)
		orig, p := tr.Where(pc)
		switch {
		case k == 0 && p != BeforeCount, k > 0 && p != InCount, orig != addr:
			t.Errorf("Where(update +%d) = %#x, %v", off, orig, p)
		}
		if k > 0 {
			rw, ok := tr.Rewind(pc)
			if !ok {
				t.Fatalf("no Rewind at update +%d", off)
			}
			rsp, rx := m.reg[x86asm.RSP]+rw.SP, m.reg[x86asm.RAX]
			if len(rw.Saved) == 1 && rw.Saved[0] == x86asm.RAX {
				rx = m.mem[m.reg[x86asm.RSP]]
			}
			if rsp != sp || rx != rax || rw.Counted != (m.mem[gs+ctr] == 42) {
				t.Errorf("Rewind(update +%d) = %+v: rsp %#x, rax %#x, counter %d", off, rw, rsp, rx, m.mem[gs+ctr])
			}
		}
		inst, err := x86asm.Decode(tr.Code[off:], 64)
		if err != nil {
			t.Fatalf("update +%d: %v", off, err)
		}
		if inst.Op != want || !flagFree[inst.Op] {
			t.Fatalf("update +%d is %v, want %v", off, inst, want)
		}
		if _, writes, ok := flagEffect(inst); !ok || writes != 0 {
			t.Errorf("update +%d: %v writes flags %#x (known %v)", off, inst, writes, ok)
		}
		m.step(inst)
		off += inst.Len
	}
	if off != keepCounterLen {
		t.Fatalf("update is %d bytes, want %d", off, keepCounterLen)
	}
	if m.reg[x86asm.RSP] != sp || m.reg[x86asm.RAX] != rax || m.mem[gs+ctr] != 42 {
		t.Errorf("after the update: rsp %#x, rax %#x, counter %d", m.reg[x86asm.RSP], m.reg[x86asm.RAX], m.mem[gs+ctr])
	}
	for a := range m.mem {
		if a >= sp-redZone && a < sp+8 {
			t.Errorf("the update wrote %#x, in the red zone", a)
		}
	}
	if orig, p := tr.Where(at + keepCounterLen); orig != addr || p != Counted {
		t.Errorf("Where(after the update) = %#x, %v", orig, p)
	}
	if _, ok := tr.Rewind(at + keepCounterLen); ok {
		t.Error("Rewind past the update")
	}
	if inst, err := x86asm.Decode(tr.Code[keepCounterLen:], 64); err != nil || inst.Op != x86asm.SHL {
		t.Errorf("first displaced instruction %v (%v), want shl", inst, err)
	}
	// A trampoline whose site's flags are dead keeps the plain add.
	js.KeepFlags = false
	if tr, err := BuildTrampoline(code, addr, at, js, ctr); err != nil || tr.Code[0] != 0x65 {
		t.Errorf("plain trampoline starts % x (%v)", tr.Code[:4], err)
	} else if _, ok := tr.Rewind(at + 5); ok {
		t.Error("Rewind in a plain trampoline")
	}
}
