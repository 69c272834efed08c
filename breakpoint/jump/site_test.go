package jump

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

func TestPlanJump(t *testing.T) {
	const addr = 0x401000
	for _, c := range []struct {
		name      string
		hex       string
		target    uint64 // a branch target, 0 for none
		end       uint64 // function end, 0 for none
		insns     []int
		flagsDead bool
		reason    string
	}{
		{name: "O0 body", hex: "48897df8 8975f4 8b45f4 01c0 c3", insns: []int{4, 3}, flagsDead: true},
		{name: "target inside", hex: "48897df8 8975f4 8b45f4 01c0 c3", target: addr + 4, reason: ReasonTarget},
		{name: "target at the site", hex: "48897df8 8975f4 8b45f4 01c0 c3", target: addr, insns: []int{4, 3}, flagsDead: true},
		{name: "function ends", hex: "48897df8 8975f4", end: addr + 4, reason: ReasonEnd},
		{name: "branch first", hex: "7405 48897df8 8975f4", reason: ReasonTransfer},
		{name: "call", hex: "e800000000 c3", insns: []int{5}, flagsDead: true},
		{name: "cmp then jle last", hex: "4883ff01 7e10 c3", insns: []int{4, 2}, flagsDead: true},
		{name: "flags read after", hex: "b801000000 7405 c3", insns: []int{5}, flagsDead: false},
		{name: "inc leaves CF", hex: "ffc0 ffc0 ffc0 72f0", insns: []int{2, 2, 2}, flagsDead: false},
		// costs.c's loop at -O1: mulsd, addsd, then sub writes the flags jne reads.
		{name: "sse loop body", hex: "f20f59c2 f20f58c1 4883e801 75f2 c3", insns: []int{4, 4}, flagsDead: true},
		{name: "int3", hex: "cc 48897df8", reason: ReasonUndecodable},
		// Go's atomic.Add in a leaf: leaq, leaq, movl, leaq, lock xaddq, ret.
		{name: "go lock xadd", hex: "488d0440 488d4001 b901000000 488d15247d1000 f0480fc10a c3", insns: []int{4, 4}, flagsDead: true},
		// lock cmpxchg writes the flags jne reads.
		{name: "lock cmpxchg", hex: "488d0440 488d4001 f0480fb10a 75f0 c3", insns: []int{4, 4}, flagsDead: true},
		// fld and fstp leave RFLAGS: the cmp after them writes what jne reads.
		{name: "x87", hex: "db6df0 db7de0 4839c8 75f0 c3", insns: []int{3, 3}, flagsDead: true},
		// bt writes CF, not ZF: je still reads the flags from before.
		{name: "bt keeps ZF", hex: "488d0440 488d4001 480fa3c8 74f0 c3", insns: []int{4, 4}, flagsDead: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, err := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			code = append(code, make([]byte, 16)...)
			js := Plan(code, addr, Options{
				Target: func(a uint64) bool { return c.target != 0 && a == c.target },
				End:    c.end,
			})
			if js.Reason != c.reason {
				t.Fatalf("reason %q, want %q", js.Reason, c.reason)
			}
			if c.reason != "" {
				if js.Len != 0 {
					t.Errorf("Len %d for a refused site", js.Len)
				}
				return
			}
			if !slices.Equal(js.Insns, c.insns) {
				t.Errorf("displaced %v, want %v", js.Insns, c.insns)
			}
			sum := 0
			for _, n := range c.insns {
				sum += n
			}
			if js.Len != sum || js.Len < JmpLen {
				t.Errorf("Len %d, want %d (at least %d)", js.Len, sum, JmpLen)
			}
			if js.FlagsDead != c.flagsDead {
				t.Errorf("FlagsDead %v, want %v", js.FlagsDead, c.flagsDead)
			}
		})
	}
}
