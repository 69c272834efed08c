package breakpoint

import (
	"testing"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/cfg"
)

// rotatedLoop is a loop entered by one test and closed by another, two
// conditional jumps to the same two blocks: breakpoint/jump/edgecount_test.go
// has it instruction by instruction.
var rotatedLoop = []byte{0x85, 0xff, 0x7e, 0x07, 0x48, 0xff, 0xc0, 0xff, 0xcf, 0x75, 0xf9, 0xc3}

// rotatedTable is a table of the rotated loop's blocks, planned as
// PlanJumps plans it once the back edge is counted: arc counter 0 at
// block B's site.
func rotatedTable(t *testing.T) (*Table, int) {
	t.Helper()
	g, err := cfg.Build(cfg.Options{Name: "rotated", Addr: 0x1000, Code: rotatedLoop, SplitCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	var specs []SiteSpec
	for k, b := range g.Blocks {
		specs = append(specs, SiteSpec{Addr: b.Start, Kind: KindBlock, Entry: k == 0, Block: int32(k)})
	}
	tab := NewTable(specs, 0)
	if err := tab.SetBlocks([]FuncGraph{{Graph: g, Entry: g.Addr, Tail: g.End}}); err != nil {
		t.Fatal(err)
	}
	back := -1
	for k, e := range g.Edges {
		if e.Target == 0x1004 && e.Kind == cfg.Taken {
			back = k
		}
	}
	site, _ := tab.Index(0x1004)
	tab.jump = &jumpInfo{length: make([]uint8, tab.Len()), derived: make([]bool, tab.Len()), arcOf: map[int][]int{}}
	p := &Plan{Table: tab, Graphs: tab.Graphs()}
	arcs := map[int][]arcCounter{0: {{site: site, graph: 0, edge: back, taken: true, length: 7}}}
	tab.jump.derive = []*jump.DerivePlan{nil}
	tab.jump.measured = make([][]bool, 1)
	measured := make([]bool, len(g.Edges))
	measured[back] = true
	tab.jump.derive[0], _ = jump.NewFlow(g, measured).Solve(nil)
	p.keepArcs(arcs, make([]string, tab.Len()))
	return tab, back
}

// TestDeriveFlowArcs: DeriveFlow reads the counted arc and derives the
// others; an arc whose site never took its patch, in a block that ran,
// leaves the function underived and says so (ArcsLost).
func TestDeriveFlowArcs(t *testing.T) {
	tab, back := rotatedTable(t)
	for i, c := range []uint64{10, 25, 10} {
		tab.cnt.Hits[i] = c
	}
	tab.cnt.ArcHits[0] = 18
	tab.ArcServed(0)
	if bad, lost := tab.DeriveFlow(tab.cnt, nil); bad != 0 || lost != 0 {
		t.Fatalf("DeriveFlow: %d inconsistent, %d lost", bad, lost)
	}
	edges, arr := counts(tab, 0)
	if edges[back] != 18 || arr[0] != 10 {
		t.Errorf("edges %v arrivals %v: want the back edge 18, 10 entries", edges, arr)
	}
	var sum uint64
	for _, e := range edges {
		sum += e
	}
	if sum != 3+7+18+7 {
		t.Errorf("edges %v, want 3, 7, 18 and 7", edges)
	}

	tab, _ = rotatedTable(t)
	tab.cnt.Hits[1] = 25 // B ran, and its arc was never counted in the target
	if bad, lost := tab.DeriveFlow(tab.cnt, nil); bad != 1 || lost != 1 {
		t.Errorf("an uncounted arc: %d inconsistent, %d lost; want 1 and 1", bad, lost)
	}
	tab, _ = rotatedTable(t)
	tab.cnt.Hits[0] = 4 // only A ran: the arc's block never did, its count is 0
	if bad, lost := tab.DeriveFlow(tab.cnt, nil); bad != 0 || lost != 0 {
		t.Errorf("an arc whose block never ran: %d inconsistent, %d lost; want none", bad, lost)
	}
}
