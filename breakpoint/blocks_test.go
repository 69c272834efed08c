package breakpoint

import (
	"encoding/hex"
	"slices"
	"testing"

	"github.com/patchprof/patchprof/cfg"
)

// Hand-assembled functions for block counting.
var blockFuncs = []struct {
	name        string
	addr        uint64
	code        string
	entry, tail uint64 // 0: the function's entry and end
}{
	// loop: B0 xor eax,eax; B1 inc eax; cmp eax,edi; jl B1; B2 ret
	{name: "loop", addr: 0x1000, code: "31c0" + "ffc0" + "39f8" + "7cfa" + "c3"},
	// goish: B0 cmp rsp,[r14+0x10]; jbe B2; B1 xor eax,eax; ret;
	// B2 call morestack; jmp B0 (Go's stack check, entry site at B1)
	{name: "goish", addr: 0x2000, code: "493b6610" + "7603" + "31c0" + "c3" + "e8f20f0000" + "ebf0", entry: 0x2006, tail: 0x2009},
	// spin: B0 dec edi; jne B0; B1 ret (a loop whose head is the entry)
	{name: "spin", addr: 0x4000, code: "ffcf" + "75fc" + "c3"},
}

// blockTable builds a table with a block site at every block start of
// blockFuncs, as NewPlan does with PlanOptions.Blocks.
func blockTable(t *testing.T) *Table {
	t.Helper()
	var specs []SiteSpec
	var graphs []FuncGraph
	nb, ne := 0, 0
	for i, f := range blockFuncs {
		code, err := hex.DecodeString(f.code)
		if err != nil {
			t.Fatal(err)
		}
		g, err := cfg.Build(cfg.Options{Name: f.name, Addr: f.addr, Code: code})
		if err != nil {
			t.Fatal(err)
		}
		entry, tail := f.entry, f.tail
		if entry == 0 {
			entry, tail = g.Addr, g.End
		}
		graphs = append(graphs, FuncGraph{Func: int32(i), Graph: g, Entry: entry, Tail: tail, FirstBlock: int32(nb), FirstEdge: int32(ne)})
		for k, b := range g.Blocks {
			specs = append(specs, SiteSpec{Addr: b.Start, Kind: KindBlock, Func: int32(i), Entry: b.Start == entry, Block: int32(nb + k)})
		}
		nb += len(g.Blocks)
		ne += len(g.Edges)
	}
	tab := NewTable(specs, 0)
	if err := tab.SetBlocks(graphs); err != nil {
		t.Fatal(err)
	}
	return tab
}

// counts returns the edge counts and arrivals of function k.
func counts(tab *Table, k int) (edges, arrivals []uint64) {
	g := tab.Graphs()[k]
	edges = tab.cnt.EdgeCounts[g.FirstEdge : int(g.FirstEdge)+len(g.Graph.Edges)]
	arrivals = tab.cnt.BlockArrivals[g.FirstBlock : int(g.FirstBlock)+len(g.Graph.Blocks)]
	return edges, arrivals
}

func checkBlocks(t *testing.T, tab *Table, k int, wantEdges, wantArrivals []uint64) {
	t.Helper()
	edges, arrivals := counts(tab, k)
	if !slices.Equal(edges, wantEdges) || !slices.Equal(arrivals, wantArrivals) {
		t.Errorf("%s: edges %v, arrivals %v; want %v, %v (graph %v)", blockFuncs[k].name, edges, arrivals, wantEdges, wantArrivals, tab.Graphs()[k].Graph)
	}
	// Flow conservation, with the arrivals at the first block as entries.
	g := tab.Graphs()[k]
	var blocks []uint64
	for _, b := range g.Graph.Blocks {
		i, _ := tab.Index(b.Start)
		blocks = append(blocks, tab.cnt.Hits[i])
	}
	if bad := cfg.CheckFlow(g.Graph, blocks, edges, arrivals[0]); bad != nil {
		t.Errorf("%s: flow not conserved: %+v", blockFuncs[k].name, bad)
	}
}

func TestBlocksGraphs(t *testing.T) {
	tab := blockTable(t)
	want := []string{
		"1000-1002/1:fall>f1 1002-1008/3:cond>t1,f2 1008-1009/1:return",
		"2000-2006/2:cond>t2,f1 2006-2009/2:return 2009-2010/2:jump>t0",
		"4000-4004/2:cond>t0,f1 4004-4005/1:return",
	}
	for k, g := range tab.Graphs() {
		if got := g.Graph.String(); got != want[k] {
			t.Errorf("%s: graph %s, want %s", blockFuncs[k].name, got, want[k])
		}
	}
}

func TestBlocksLoop(t *testing.T) {
	tab := blockTable(t)
	var c Cursor
	runSP(t, tab, &c, [2]uint64{0x1000, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1008, 100})
	checkBlocks(t, tab, 0, []uint64{1, 2, 1}, []uint64{1, 0, 0})
}

func TestBlocksRecursion(t *testing.T) {
	tab := blockTable(t)
	var c Cursor
	runSP(t, tab, &c,
		[2]uint64{0x1000, 100}, [2]uint64{0x1002, 100}, // outer: entry, loop head
		[2]uint64{0x1000, 90}, [2]uint64{0x1002, 90}, [2]uint64{0x1008, 90}, // a call from inside the loop
		[2]uint64{0x1002, 100}, [2]uint64{0x1008, 100}) // outer again: a second trip, then out
	checkBlocks(t, tab, 0, []uint64{2, 1, 2}, []uint64{2, 0, 0})
}

func TestBlocksGoStackCheck(t *testing.T) {
	tab := blockTable(t)
	var c Cursor
	runSP(t, tab, &c,
		[2]uint64{0x2000, 200}, [2]uint64{0x2009, 200}, // stack check fails: morestack
		[2]uint64{0x2000, 5000}, [2]uint64{0x2006, 5000}, // on the new stack, again, then the entry site
		[2]uint64{0x2000, 200}, [2]uint64{0x2006, 200}) // a second call
	checkBlocks(t, tab, 1, []uint64{1, 2, 1}, []uint64{2, 0, 0})
}

func TestBlocksJumpToEntry(t *testing.T) {
	tab := blockTable(t)
	var c Cursor
	runSP(t, tab, &c, [2]uint64{0x4000, 50}, [2]uint64{0x4000, 50}, [2]uint64{0x4000, 50}, [2]uint64{0x4004, 50},
		[2]uint64{0x4000, 50}, [2]uint64{0x4004, 50}) // a new call at the same SP, after the return
	checkBlocks(t, tab, 2, []uint64{2, 2}, []uint64{2, 0})
}

func TestBlocksUnhit(t *testing.T) {
	trace := [][2]uint64{
		{0x1000, 100}, {0x1002, 100}, {0x1000, 90}, {0x1002, 90}, {0x1008, 90}, {0x1002, 100},
		{0x2000, 80}, {0x2009, 80}, {0x2000, 80}, {0x2006, 80}, {0x1008, 100},
		{0x4000, 50}, {0x4000, 50}, {0x4004, 50},
	}
	want := blockTable(t)
	var wc Cursor
	runSP(t, want, &wc, trace...)
	tab := blockTable(t)
	var c Cursor
	for _, x := range trace {
		i, _ := tab.Index(x[0])
		u := tab.Hit(&c, i, x[1])
		tab.Unhit(&c, u)
		tab.Hit(&c, i, x[1])
	}
	if !slices.Equal(tab.cnt.EdgeCounts, want.cnt.EdgeCounts) || !slices.Equal(tab.cnt.BlockArrivals, want.cnt.BlockArrivals) || !slices.Equal(tab.cnt.Hits, want.cnt.Hits) {
		t.Errorf("with undone hits: edges %v arrivals %v hits %v; want %v %v %v",
			tab.cnt.EdgeCounts, tab.cnt.BlockArrivals, tab.cnt.Hits, want.cnt.EdgeCounts, want.cnt.BlockArrivals, want.cnt.Hits)
	}
}

func TestBlocksHitAllocs(t *testing.T) {
	tab := blockTable(t)
	var c Cursor
	trace := [][2]uint64{{0x1000, 100}, {0x1002, 100}, {0x1002, 100}, {0x1008, 100}, {0x2000, 100}, {0x2006, 100}}
	idx := make([]int, len(trace))
	for k, x := range trace {
		idx[k], _ = tab.Index(x[0])
	}
	hit := func() {
		for k, x := range trace {
			u := tab.Hit(&c, idx[k], x[1])
			if k == 2 {
				tab.Unhit(&c, u)
				tab.Hit(&c, idx[k], x[1])
			}
		}
	}
	hit() // the cursor's first sight of each function may allocate
	if n := testing.AllocsPerRun(100, hit); n != 0 {
		t.Errorf("%v allocations per trace, want 0", n)
	}
}

func TestKindStringBlocks(t *testing.T) {
	for k, want := range map[Kind]string{
		KindBlock: "block", KindLine | KindBlock: "line,block", KindFunc | KindBlock: "func,block",
		KindLine | KindFunc | KindBlock: "line,func,block", KindLine | KindFunc: "line,func", 0: "kind(0)", 8: "kind(8)",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
