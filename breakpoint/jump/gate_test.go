package jump

import (
	"slices"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestPlanGate: a gate displaces whole instructions up to a jmp's length;
// a ret before that ends them when the padding after it (room) reaches the
// jmp's length.
func TestPlanGate(t *testing.T) {
	const addr = 0x2060
	pad := []byte{0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}
	for _, tc := range []struct {
		name      string
		code      []byte
		room      uint64
		ok        bool
		len, dead int
		insns     []int
	}{
		{"ret and padding", append([]byte{0xc3}, pad...), 16, true, 5, 4, []int{1}},
		{"ret, next function at once", append([]byte{0xc3}, pad...), 1, false, 0, 0, nil},
		{"endbr64 and ret", append([]byte{0xf3, 0x0f, 0x1e, 0xfa, 0xc3}, pad...), 16, true, 5, 0, []int{4, 1}},
		{"push and mov", []byte{0x55, 0x48, 0x89, 0xe5, 0x90, 0x90}, 16, true, 5, 0, []int{1, 3, 1}},
		{"across the next function", []byte{0x55, 0x48, 0x89, 0xe5, 0x90, 0x90}, 4, false, 0, 0, nil},
	} {
		js, ok := PlanGate(tc.code, addr, tc.room)
		if ok != tc.ok || ok && (js.Len != tc.len || js.Dead != tc.dead || !js.Gate || !slices.Equal(js.Insns, tc.insns)) {
			t.Errorf("%s: PlanGate = %+v, %v; want ok %v, len %d, dead %d, insns %v", tc.name, js, ok, tc.ok, tc.len, tc.dead, tc.insns)
		}
	}
}

// TestGateTrampoline builds a gate over a ret and checks its code against
// its tables: the patch is a jmp to it, every instruction boundary inside
// the gate has a Rewind whose stack offset and saved registers follow the
// pushes and pops decoded so far, GateStop is just past the tgkill, and
// GateFinish resumes at the displaced ret.
func TestGateTrampoline(t *testing.T) {
	const addr, at = 0x7000_2060, 0x7000_9000
	code := []byte{0xc3, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}
	js, ok := PlanGate(code, addr, 16)
	if !ok {
		t.Fatal("PlanGate refused a ret with padding")
	}
	tr, err := BuildTrampoline(code, addr, at, js, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.IsGate() || tr.Patch[0] != 0xE9 || len(tr.Patch) != JmpLen || len(tr.Orig) != JmpLen {
		t.Fatalf("gate patch %x, orig %x", tr.Patch, tr.Orig)
	}
	var stack []x86asm.Reg // pushed, the last on top
	sp := uint64(0)
	syscalls := 0
	for off := 0; off < len(gateCode); {
		inst, err := x86asm.Decode(tr.Code[off:], 64)
		if err != nil {
			t.Fatalf("gate +%#x: %v", off, err)
		}
		if off > 0 {
			rw, ok := tr.Rewind(at + uint64(off))
			if !ok {
				t.Fatalf("no Rewind at gate +%#x", off)
			}
			if rw.SP != sp || len(rw.Saved) != len(stack) {
				t.Fatalf("Rewind(gate +%#x) = %+v; want SP %d, %d saved", off, rw, sp, len(stack))
			}
			for k, r := range rw.Saved {
				if r != stack[len(stack)-1-k] {
					t.Fatalf("Rewind(gate +%#x) saved %v; pushed %v", off, rw.Saved, stack)
				}
			}
		}
		switch inst.Op {
		case x86asm.LEA:
			mem := inst.Args[1].(x86asm.Mem)
			sp = uint64(int64(sp) - mem.Disp)
		case x86asm.PUSH:
			stack = append(stack, inst.Args[0].(x86asm.Reg))
			sp += 8
		case x86asm.POP:
			if r := inst.Args[0].(x86asm.Reg); r != stack[len(stack)-1] {
				t.Fatalf("gate +%#x pops %v, pushed last %v", off, r, stack[len(stack)-1])
			}
			stack = stack[:len(stack)-1]
			sp -= 8
		case x86asm.SYSCALL:
			syscalls++
			if syscalls == 3 && tr.GateStop() != at+uint64(off+inst.Len) {
				t.Fatalf("GateStop %#x, tgkill ends at %#x", tr.GateStop(), at+uint64(off+inst.Len))
			}
		}
		off += inst.Len
	}
	if sp != 0 || len(stack) != 0 || syscalls != 3 {
		t.Fatalf("gate ends with SP %d, %v pushed, %d system calls", sp, stack, syscalls)
	}
	rw, resume, ok := tr.GateFinish(tr.GateStop())
	if !ok || resume != at+uint64(len(gateCode)) || rw.SP != redZone+48 || tr.Code[len(gateCode)] != 0xc3 {
		t.Fatalf("GateFinish = %+v, %#x, %v", rw, resume, ok)
	}
	if _, _, ok := tr.GateFinish(at + 5); ok {
		t.Fatal("GateFinish before the tgkill")
	}
}
