package jump

import (
	"testing"

	"github.com/patchprof/patchprof/cfg"
)

// pointerTail is GCC -O2's caller of a function pointer called twice, the
// second call a tail jump through a register: a block that leaves the
// function with no edge.
var pointerTail = []byte{
	0x48, 0x83, 0xec, 0x08, // 0x1000 sub $8,%rsp             A
	0xbf, 0x02, 0x00, 0x00, 0x00, // 0x1004 mov $2,%edi
	0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, // 0x1009 mov 0x1000(%rip),%rax
	0xff, 0xd0, // 0x1010 call *%rax
	0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, // 0x1012 mov 0x1000(%rip),%rax   B
	0xbf, 0x02, 0x00, 0x00, 0x00, // 0x1019 mov $2,%edi
	0x48, 0x83, 0xc4, 0x08, // 0x101e add $8,%rsp
	0xff, 0xe0, // 0x1022 jmp *%rax
}

// TestDerivePointerTail: the count of a block that leaves through a
// pointer follows from nothing (its exit is no edge), so it is never
// derived: a call before it may not return, and the count would be the
// entry's less the activations that stopped, not 0.
func TestDerivePointerTail(t *testing.T) {
	g, err := cfg.Build(cfg.Options{Name: "pointerTail", Addr: 0x1000, Code: pointerTail, SplitCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Blocks) != 2 || g.Blocks[1].Term != cfg.TermTailCall || len(g.Succs(1)) != 0 {
		t.Fatalf("blocks %+v, edges %+v: want a block ending in a call, then a tail jump with no edge", g.Blocks, g.Edges)
	}
	if _, ok := PlanDerive(g, []bool{false, true}); ok {
		t.Fatal("the pointer tail's block derives from the entry's count")
	}
	dp, ok := PlanDerive(g, nil)
	if !ok {
		t.Fatal("the edges do not follow with both blocks counted")
	}
	c := []uint64{5, 4} // one of five calls did not return
	edges := make([]uint64, len(g.Edges))
	arr := make([]uint64, len(g.Blocks))
	if !dp.Derive(g, c, nil, edges, arr) || c[1] != 4 || arr[0] != 5 {
		t.Fatalf("derived counts %v, arrivals %v; want the block's 4 kept and 5 entries", c, arr)
	}
}
