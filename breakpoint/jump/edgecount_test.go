package jump

import (
	"encoding/binary"
	"testing"

	"github.com/patchprof/patchprof/cfg"
)

// rotatedLoop is a loop entered by one test and closed by another (GCC's
// `if (n > 0) do ... while (--n > 0)`): two conditional jumps to the same
// two blocks, so one arc does not follow from the block counts.
var rotatedLoop = []byte{
	0x85, 0xff, // 0x1000 test %edi,%edi      A
	0x7e, 0x07, // 0x1002 jle 0x100b
	0x48, 0xff, 0xc0, // 0x1004 inc %rax     B
	0xff, 0xcf, // 0x1007 dec %edi
	0x75, 0xf9, // 0x1009 jne 0x1004
	0xc3, // 0x100b ret                       X
}

// TestMeasuredArcDerives: the rotated loop's edges do not follow from its
// block counts, and do once the back edge is counted; the derived counts
// are the run's.
func TestMeasuredArcDerives(t *testing.T) {
	g, err := cfg.Build(cfg.Options{Name: "rotated", Addr: 0x1000, Code: rotatedLoop, SplitCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := PlanDerive(g, nil); ok {
		t.Fatal("the rotated loop derives without a counted arc")
	}
	back := -1
	for k, e := range g.Edges {
		if e.Target == 0x1004 && e.Kind == cfg.Taken {
			back = k
		}
	}
	if back < 0 {
		t.Fatalf("no back edge in %+v", g.Edges)
	}
	measured := make([]bool, len(g.Edges))
	measured[back] = true
	dp, left := NewFlow(g, measured).Solve(nil)
	if left != nil {
		t.Fatalf("still unknown with the back edge counted: %v", left)
	}
	// 10 calls, 3 with n <= 0; the loop runs 25 times in all.
	c := []uint64{10, 25, 10}
	edges := make([]uint64, len(g.Edges))
	edges[back] = 18
	arr := make([]uint64, len(g.Blocks))
	if !dp.Derive(g, c, nil, edges, arr) {
		t.Fatal("inconsistent")
	}
	want := map[[2]uint64]uint64{{0x1000, 0x100b}: 3, {0x1000, 0x1004}: 7, {0x1004, 0x1004}: 18, {0x1004, 0x100b}: 7}
	for k, e := range g.Edges {
		if w := want[[2]uint64{g.Blocks[e.From].Start, e.Target}]; edges[k] != w {
			t.Errorf("edge %#x->%#x = %d, want %d", g.Blocks[e.From].Start, e.Target, edges[k], w)
		}
	}
	if arr[0] != 10 {
		t.Errorf("entries %d, want 10", arr[0])
	}
}

// TestTrampolineCountsArc: a trampoline that displaces a whole block
// ending in a conditional jump counts one of its arcs, on the taken side
// or on the fall-through, and maps every point of it back.
func TestTrampolineCountsArc(t *testing.T) {
	const at = 0x7000
	code := rotatedLoop[4:11] // block B
	js := Site{Len: 7, Insns: []int{3, 2, 2}, FlagsDead: true}
	for _, taken := range []bool{false, true} {
		js.Edges = []EdgeCount{{Counter: 0x48, Taken: taken}}
		tr, err := BuildTrampoline(code, 0x1004, at, js, 0x40)
		if err != nil {
			t.Fatal(err)
		}
		c := tr.Code
		// addq $1,%gs:0x40; inc; dec; then the jcc.
		j := counterLen + 3 + 2
		if c[j] != 0x0F || c[j+1] != 0x85 {
			t.Fatalf("taken=%v: no jne rel32 at %d: % x", taken, j, c)
		}
		jccTo := uint64(at+j+6) + uint64(int64(int32(binary.LittleEndian.Uint32(c[j+2:]))))
		ctr := j + 6 // the arc's counter: after the jcc, or after the jmp back
		dest := uint64(0x100b)
		if taken {
			ctr = j + 6 + JmpLen
			dest = 0x1004
			if jccTo != at+uint64(ctr) {
				t.Errorf("jcc goes to %#x, want the counting stub %#x", jccTo, at+ctr)
			}
		} else if jccTo != 0x1004 {
			t.Errorf("jcc goes to %#x, want 0x1004", jccTo)
		}
		if c[ctr] != 0x65 || binary.LittleEndian.Uint32(c[ctr+5:]) != 0x48 {
			t.Errorf("taken=%v: no arc counter at %d: % x", taken, ctr, c)
		}
		jmp := ctr + counterLen
		jmpTo := uint64(at+jmp+5) + uint64(int64(int32(binary.LittleEndian.Uint32(c[jmp+1:]))))
		if c[jmp] != 0xE9 || jmpTo != dest {
			t.Errorf("taken=%v: after the counter: % x to %#x, want a jmp to %#x", taken, c[jmp:jmp+5], jmpTo, dest)
		}
		if _, p := tr.Where(at + uint64(ctr)); p != Inside {
			t.Errorf("taken=%v: the arc counter maps to point %d, want Inside (not yet counted)", taken, p)
		}
		if o, p := tr.Where(at + uint64(jmp)); p != InDisplaced || o != dest {
			t.Errorf("taken=%v: the jmp after the counter maps to %#x (%d), want %#x", taken, o, p, dest)
		}
		if o, p := tr.Where(at + uint64(j)); p != InDisplaced || o != 0x1009 {
			t.Errorf("taken=%v: the jcc maps to %#x (%d), want 0x1009", taken, o, p)
		}
	}
}

// TestTrampolineCountsTableArcs: the dispatch of a jump table, displaced
// whole, counts the jumps to two of its targets: a cmp of the register
// with each target (a quad after the code), a jne over its counter, then
// the jmp; every point but a counter update maps back to the jmp.
func TestTrampolineCountsTableArcs(t *testing.T) {
	const at, addr = 0x9000, 0x2000
	code := []byte{
		0x48, 0x8d, 0x15, 0x10, 0x00, 0x00, 0x00, // lea 0x10(%rip),%rdx
		0x48, 0x01, 0xd0, // add %rdx,%rax
		0x41, 0xff, 0xe0, // jmp *%r8
	}
	js := Site{Len: len(code), Insns: []int{7, 3, 3}, FlagsDead: true,
		Edges: []EdgeCount{{Counter: 0x100, Table: 0x7fff00001234}, {Counter: 0x108, Table: 0x7fff00005678}}}
	tr, err := BuildTrampoline(code, addr, at, js, 0x40)
	if err != nil {
		t.Fatal(err)
	}
	c := tr.Code
	base := counterLen + 7 + 3
	quads := base + 2*19 + 3
	for k, want := range []uint64{0x7fff00001234, 0x7fff00005678} {
		cmp := base + 19*k
		// cmp disp32(%rip),%r8: REX.WR 3B, ModRM 00 000 101.
		if c[cmp] != 0x4C || c[cmp+1] != 0x3B || c[cmp+2] != 0x05 {
			t.Fatalf("arc %d: no cmp of r8 at %d: % x", k, cmp, c)
		}
		q := cmp + 7 + int(int32(binary.LittleEndian.Uint32(c[cmp+3:])))
		if q != quads+8*k || binary.LittleEndian.Uint64(c[q:]) != want {
			t.Errorf("arc %d: the cmp reads offset %d, want the quad %#x at %d", k, q, want, quads+8*k)
		}
		if c[cmp+7] != 0x75 || c[cmp+8] != counterLen || c[cmp+9] != 0x65 {
			t.Errorf("arc %d: no jne over a counter: % x", k, c[cmp+7:cmp+19])
		}
		if o, p := tr.Where(at + uint64(cmp)); p != InDisplaced || o != addr+10 {
			t.Errorf("arc %d: its cmp maps to %#x (%d), want the jmp at %#x", k, o, p, addr+10)
		}
		if _, p := tr.Where(at + uint64(cmp+9)); p != Inside {
			t.Errorf("arc %d: its counter maps to point %d, want Inside", k, p)
		}
	}
	if got := c[quads-3 : quads]; got[0] != 0x41 || got[1] != 0xff || got[2] != 0xe0 {
		t.Errorf("no jmp *%%r8 before the quads: % x", got)
	}
	if len(c) != quads+16 {
		t.Errorf("code is %d bytes, want %d", len(c), quads+16)
	}
}
