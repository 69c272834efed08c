package jump

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/breakpoint/relocate"
	"golang.org/x/arch/x86/x86asm"
)

func hexCode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return append(b, make([]byte, 16)...)
}

// TestTrampoline builds trampolines for the common shapes and reads them
// back with the decoder: the counter update, the displaced instructions at
// their new place, and the way back.
func TestTrampoline(t *testing.T) {
	const addr, at = 0x401000, 0x7f0000
	for _, c := range []struct {
		name string
		hex  string
		ops  []x86asm.Op // the trampoline's instructions after the counter update
		back uint64      // where its last jmp goes, 0 when it ends otherwise
	}{
		{name: "O0 prologue", hex: "55 4889e5 4883ec10", ops: []x86asm.Op{x86asm.PUSH, x86asm.MOV, x86asm.SUB, x86asm.JMP}, back: addr + 8},
		{name: "cmp then jle", hex: "4883ff01 7e10 c3", ops: []x86asm.Op{x86asm.CMP, x86asm.JLE, x86asm.JMP}, back: addr + 6},
		{name: "call", hex: "e8fb0f0000 c3", ops: []x86asm.Op{x86asm.MOV, x86asm.MOV, x86asm.LEA, x86asm.JMP}},
		{name: "rip-relative", hex: "8b0534120000 ffc0", ops: []x86asm.Op{x86asm.MOV, x86asm.JMP}, back: addr + 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := hexCode(t, c.hex)
			js := Plan(code, addr, Options{})
			if js.Len == 0 {
				t.Fatalf("not a jump site: %s", js.Reason)
			}
			tr, err := BuildTrampoline(code, addr, at, js, 0x18)
			if err != nil {
				t.Fatal(err)
			}
			want := []byte{0x65, 0x48, 0x83, 0x04, 0x25, 0x18, 0, 0, 0, 0x01}
			if !bytes.HasPrefix(tr.Code, want) {
				t.Fatalf("counter update % x, want % x", tr.Code[:counterLen], want)
			}
			inst, err := x86asm.Decode(tr.Code, 64)
			if err != nil || inst.Op != x86asm.ADD || inst.Len != counterLen {
				t.Fatalf("counter update decodes as %v (%v)", inst, err)
			}
			var ops []x86asm.Op
			var lastJmp uint64
			for off := counterLen; off < len(tr.Code); {
				inst, err := x86asm.Decode(tr.Code[off:], 64)
				if err != nil {
					t.Fatalf("trampoline +%d: %v", off, err)
				}
				ops = append(ops, inst.Op)
				if rel, ok := inst.Args[0].(x86asm.Rel); ok && inst.Op == x86asm.JMP {
					lastJmp = at + uint64(off+inst.Len) + uint64(int64(rel))
				}
				off += inst.Len
			}
			if len(ops) != len(c.ops) {
				t.Fatalf("trampoline ops %v, want %v", ops, c.ops)
			}
			for k := range ops {
				if ops[k] != c.ops[k] {
					t.Fatalf("trampoline ops %v, want %v", ops, c.ops)
				}
			}
			if c.back != 0 && lastJmp != c.back {
				t.Errorf("jumps back to %#x, want %#x", lastJmp, c.back)
			}
			if tr.Patch[0] != 0xE9 || len(tr.Patch) != js.Len {
				t.Fatalf("patch % x", tr.Patch)
			}
			if got := addr + JmpLen + uint64(int64(int32(binary.LittleEndian.Uint32(tr.Patch[1:])))); got != at {
				t.Errorf("patch jumps to %#x, want %#x", got, at)
			}
			for _, b := range tr.Patch[JmpLen:] {
				if b != relocate.Int3 {
					t.Errorf("filler % x, want int3", tr.Patch[JmpLen:])
				}
			}
			if !bytes.Equal(tr.Orig, code[:js.Len]) {
				t.Errorf("Orig % x", tr.Orig)
			}
			if o, p := tr.Where(at); o != addr || p != BeforeCount {
				t.Errorf("Where(start) = %#x, %v", o, p)
			}
			if o, p := tr.Where(at + counterLen); o != addr || p != Counted {
				t.Errorf("Where(after the count) = %#x, %v", o, p)
			}
		})
	}
}

// TestTrampolineWhere maps every displaced instruction both ways.
func TestTrampolineWhere(t *testing.T) {
	const addr, at = 0x401000, 0x7f0000
	code := hexCode(t, "55 4889e5 4883ec10")
	js := Plan(code, addr, Options{})
	tr, err := BuildTrampoline(code, addr, at, js, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k, orig := range []uint64{addr + 1, addr + 4} {
		pc, ok := tr.Equivalent(orig)
		if !ok {
			t.Fatalf("no equivalent of %#x", orig)
		}
		if pc != at+counterLen+1+uint64(3*k) {
			t.Errorf("Equivalent(%#x) = %#x", orig, pc)
		}
		if o, p := tr.Where(pc); o != orig || p != InDisplaced {
			t.Errorf("Where(%#x) = %#x, %v; want %#x", pc, o, p, orig)
		}
		if !tr.Covers(orig) {
			t.Errorf("Covers(%#x) false", orig)
		}
	}
	if _, ok := tr.Equivalent(addr); ok {
		t.Error("the site itself has an equivalent past the count")
	}
	if tr.Covers(addr) || tr.Covers(addr+uint64(js.Len)) {
		t.Error("Covers the site or the byte after")
	}
	end := at + uint64(len(tr.Code)) - JmpLen
	if o, p := tr.Where(end); o != addr+uint64(js.Len) || p != InDisplaced {
		t.Errorf("Where(jmp back) = %#x, %v", o, p)
	}
}

// TestTrampolineRefused: a displaced instruction that cannot run out of
// line, and a trampoline too far from its site.
func TestTrampolineRefused(t *testing.T) {
	code := hexCode(t, "55 4889e5 4883ec10")
	js := Plan(code, 0x401000, Options{})
	if _, err := BuildTrampoline(code, 0x401000, 0x401000+1<<33, js, 0); err == nil {
		t.Error("a trampoline 8 GiB away was built")
	}
	if _, err := BuildTrampoline(code, 0x401000, 0x7f0000, Site{}, 0); err == nil {
		t.Error("a refused site got a trampoline")
	}
}

// TestTrampolineShort: a return site's `leave; ret` takes a jmp rel8 to a
// landing 5 bytes into the block before it, where a jmp rel32 goes on to
// its trampoline; the trampoline counts and runs both instructions.
func TestTrampolineShort(t *testing.T) {
	const host, addr, at = 0x401000, 0x40100f, 0x7f0000
	code := hexCode(t, "c9 c3")
	js, ok := PlanRun(code, addr, 2, func(uint64) bool { return false })
	if !ok || js.Len != 2 || len(js.Insns) != 2 {
		t.Fatalf("PlanRun: %+v %v", js, ok)
	}
	tr, err := BuildTrampoline(code, addr, at, js, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetShort(host + JmpLen); err != nil {
		t.Fatal(err)
	}
	d := int64(host+JmpLen) - int64(addr+2)
	if want := []byte{0xEB, byte(d)}; !bytes.Equal(tr.Patch, want) {
		t.Errorf("patch % x, want % x", tr.Patch, want)
	}
	if got := host + 2*JmpLen + uint64(int64(int32(binary.LittleEndian.Uint32(tr.LandingJmp[1:])))); tr.LandingJmp[0] != 0xE9 || got != at {
		t.Errorf("landing jmp % x goes to %#x, want %#x", tr.LandingJmp, got, at)
	}
	ops := trampolineOps(t, tr)
	if len(ops) != 2 || ops[0] != x86asm.LEAVE || ops[1] != x86asm.RET {
		t.Errorf("trampoline runs %v, want [LEAVE RET]", ops)
	}
	if err := tr.SetShort(addr - 200); err == nil {
		t.Error("a landing 200 bytes away was accepted for a jmp rel8")
	}
}

// trampolineOps decodes tr's code after its counter update: the
// operations it runs, in order (ending where its code ends: no data after
// the code, as in a trampoline that counts no table arcs).
func trampolineOps(t *testing.T, tr *Trampoline) []x86asm.Op {
	t.Helper()
	var ops []x86asm.Op
	for off := counterLen; off < len(tr.Code); {
		inst, err := x86asm.Decode(tr.Code[off:], 64)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, inst.Op)
		off += inst.Len
	}
	return ops
}
