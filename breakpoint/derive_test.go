package breakpoint

import (
	"slices"
	"testing"
)

// deriveAll plans every graph of tab as PlanJumps does.
func deriveAll(t *testing.T, tab *Table) {
	t.Helper()
	tab.jump = &jumpInfo{length: make([]uint8, tab.Len()), derived: make([]bool, tab.Len())}
	for _, fg := range tab.Graphs() {
		dp, ok := planDerive(fg.Graph, nil)
		if !ok {
			t.Fatalf("%s: edges do not follow from block counts", fg.Graph.Name)
		}
		tab.jump.derive = append(tab.jump.derive, dp)
	}
}

// TestDeriveMatchesCursor: the edge counts and arrivals derived from block
// counts alone equal those the cursor counted hit by hit, on loops, a
// recursion, Go's stack check and a loop whose head is the entry.
func TestDeriveMatchesCursor(t *testing.T) {
	for _, trace := range [][][2]uint64{
		{{0x1000, 100}, {0x1002, 100}, {0x1002, 100}, {0x1002, 100}, {0x1008, 100}},
		{{0x1000, 100}, {0x1002, 100}, {0x1000, 90}, {0x1002, 90}, {0x1008, 90}, {0x1002, 100}, {0x1008, 100}},
		{{0x2000, 200}, {0x2009, 200}, {0x2000, 5000}, {0x2006, 5000}, {0x2000, 200}, {0x2006, 200}},
		{{0x4000, 50}, {0x4000, 50}, {0x4000, 50}, {0x4004, 50}, {0x4000, 50}, {0x4004, 50}},
	} {
		tab := blockTable(t)
		var c Cursor
		runSP(t, tab, &c, trace...)
		wantE := slices.Clone(tab.EdgeCounts)
		wantA := slices.Clone(tab.BlockArrivals)
		deriveAll(t, tab)
		if bad := tab.DeriveFlow(nil); bad != 0 {
			t.Errorf("trace %v: %d inconsistent functions", trace, bad)
		}
		if !slices.Equal(tab.EdgeCounts, wantE) || !slices.Equal(tab.BlockArrivals, wantA) {
			t.Errorf("trace %v: derived edges %v arrivals %v; the cursor counted %v, %v", trace, tab.EdgeCounts, tab.BlockArrivals, wantE, wantA)
		}
	}
}

// TestDeriveFault: a run that ends in a fault inside a loop's block: that
// block's last entry leaves along no edge.
func TestDeriveFault(t *testing.T) {
	tab := blockTable(t)
	var c Cursor
	runSP(t, tab, &c, [2]uint64{0x1000, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1002, 100})
	deriveAll(t, tab)
	fault := uint64(0x1004)
	if bad := tab.DeriveFlow(&fault); bad != 0 {
		t.Errorf("%d inconsistent functions", bad)
	}
	checkBlocks(t, tab, 0, []uint64{1, 1, 0}, []uint64{1, 0, 0})
}

// TestDeriveUnplantedBlock: the count of a block that is never planted
// follows from the others', with every edge.
func TestDeriveUnplantedBlock(t *testing.T) {
	tab := blockTable(t)
	var c Cursor
	runSP(t, tab, &c, [2]uint64{0x1000, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1008, 100},
		[2]uint64{0x1000, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1008, 100})
	wantE := slices.Clone(tab.EdgeCounts)
	wantH := slices.Clone(tab.Hits)
	deriveAll(t, tab)
	g := tab.Graphs()[0].Graph
	dp, ok := planDerive(g, []bool{false, false, true})
	if !ok {
		t.Fatal("the loop's exit block does not follow from the others")
	}
	tab.jump.derive[0] = dp
	ret, _ := tab.Index(0x1008)
	tab.jump.derived[ret] = true
	tab.Hits[ret] = 0
	if bad := tab.DeriveFlow(nil); bad != 0 {
		t.Errorf("%d inconsistent functions", bad)
	}
	if !slices.Equal(tab.EdgeCounts, wantE) || !slices.Equal(tab.Hits, wantH) {
		t.Errorf("derived edges %v hits %v; want %v, %v", tab.EdgeCounts, tab.Hits, wantE, wantH)
	}
	if _, ok := planDerive(g, []bool{false, true, true}); ok {
		t.Error("the loop's body and exit both follow from the entry alone")
	}
}
