package breakpoint

import (
	"slices"
	"testing"

	"github.com/patchprof/patchprof/breakpoint/jump"
)

// deriveAll plans every graph of tab as PlanJumps does.
func deriveAll(t *testing.T, tab *Table) {
	t.Helper()
	tab.jump = &jumpInfo{length: make([]uint8, tab.Len()), derived: make([]bool, tab.Len())}
	for _, fg := range tab.Graphs() {
		dp, ok := jump.PlanDerive(fg.Graph, nil)
		if !ok {
			t.Fatalf("%s: edges do not follow from block counts", fg.Graph.Name)
		}
		tab.jump.derive = append(tab.jump.derive, dp)
	}
}

// deriveOne plans function 0 of tab with its block at addr derived (the
// others measured), as PlanJumps would for that choice, and returns the
// block's site.
func deriveOne(t *testing.T, tab *Table, derived []bool, addr uint64, what string) int {
	t.Helper()
	dp, ok := jump.PlanDerive(tab.Graphs()[0].Graph, derived)
	if !ok {
		t.Fatalf("%s does not follow from the others", what)
	}
	tab.jump.derive[0] = dp
	i, _ := tab.Index(addr)
	tab.jump.derived[i] = true
	return i
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
		wantE := slices.Clone(tab.cnt.EdgeCounts)
		wantA := slices.Clone(tab.cnt.BlockArrivals)
		deriveAll(t, tab)
		if bad, _ := tab.DeriveFlow(tab.cnt, nil); bad != 0 {
			t.Errorf("trace %v: %d inconsistent functions", trace, bad)
		}
		if !slices.Equal(tab.cnt.EdgeCounts, wantE) || !slices.Equal(tab.cnt.BlockArrivals, wantA) {
			t.Errorf("trace %v: derived edges %v arrivals %v; the cursor counted %v, %v", trace, tab.cnt.EdgeCounts, tab.cnt.BlockArrivals, wantE, wantA)
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
	if bad, _ := tab.DeriveFlow(tab.cnt, []jump.Stop{{Addr: fault, Entered: true}}); bad != 0 {
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
	wantE := slices.Clone(tab.cnt.EdgeCounts)
	wantH := slices.Clone(tab.cnt.Hits)
	deriveAll(t, tab)
	g := tab.Graphs()[0].Graph
	ret := deriveOne(t, tab, []bool{false, false, true}, 0x1008, "the loop's exit block")
	tab.cnt.Hits[ret] = 0
	if bad, _ := tab.DeriveFlow(tab.cnt, nil); bad != 0 {
		t.Errorf("%d inconsistent functions", bad)
	}
	if !slices.Equal(tab.cnt.EdgeCounts, wantE) || !slices.Equal(tab.cnt.Hits, wantH) {
		t.Errorf("derived edges %v hits %v; want %v, %v", tab.cnt.EdgeCounts, tab.cnt.Hits, wantE, wantH)
	}
	if _, ok := jump.PlanDerive(g, []bool{false, true, true}); ok {
		t.Error("the loop's body and exit both follow from the entry alone")
	}
}

// TestDeriveFaultInDerivedBlock: the block a crash left is itself derived,
// its count given by its out-equation: the activation that stopped inside
// it is one entry more than its edges (crash7: `if (argc > 2) { int *p =
// 0; return *p; }` was shown as never run).
func TestDeriveFaultInDerivedBlock(t *testing.T) {
	tab := blockTable(t)
	var c Cursor
	// One whole call, then a second that faults in the entry block.
	runSP(t, tab, &c, [2]uint64{0x1000, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1008, 100}, [2]uint64{0x1000, 100})
	deriveAll(t, tab)
	entry := deriveOne(t, tab, []bool{true, false, false}, 0x1000, "the entry block")
	tab.cnt.Hits[entry] = 0
	if bad, _ := tab.DeriveFlow(tab.cnt, []jump.Stop{{Addr: 0x1000, Entered: true}}); bad != 0 {
		t.Errorf("%d inconsistent functions", bad)
	}
	if tab.cnt.Hits[entry] != 2 {
		t.Errorf("the faulting entry block derived %d, want 2", tab.cnt.Hits[entry])
	}
	checkBlocks(t, tab, 0, []uint64{1, 1, 1}, []uint64{2, 0, 0})
}

// TestDeriveEnds: every activation that stopped inside a block counts
// (two threads in one block), and an end in a block with no out-equation
// (a return block here, as a call block: a frame waiting for its callee)
// changes nothing.
func TestDeriveEnds(t *testing.T) {
	tab := blockTable(t)
	var c1, c2 Cursor
	runSP(t, tab, &c1, [2]uint64{0x1000, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1008, 100})
	runSP(t, tab, &c1, [2]uint64{0x1000, 100})
	runSP(t, tab, &c2, [2]uint64{0x1000, 200})
	deriveAll(t, tab)
	entry := deriveOne(t, tab, []bool{true, false, false}, 0x1000, "the entry block")
	tab.cnt.Hits[entry] = 0
	if bad, _ := tab.DeriveFlow(tab.cnt, []jump.Stop{{Addr: 0x1001}, {Addr: 0x1008, Entered: true}, {Addr: 0x1001}}); bad != 0 {
		t.Errorf("%d inconsistent functions", bad)
	}
	if tab.cnt.Hits[entry] != 3 {
		t.Errorf("the entry block derived %d, want 3", tab.cnt.Hits[entry])
	}
	checkBlocks(t, tab, 0, []uint64{1, 1, 1}, []uint64{3, 0, 0})
}

// TestDeriveStopBeforeBlock: a thread stopped at the first instruction of
// the loop's exit block, which it had not begun (a signal took it there):
// the edge into that block was taken, the block's count is one less than
// its in-edges, and its derived count and edges equal what the cursor
// counts (the exit block 0, the edge into it 0 as the cursor counts an
// edge when its destination begins). Taking the stop as one inside the
// block would make it 1.
func TestDeriveStopBeforeBlock(t *testing.T) {
	tab := blockTable(t)
	var c Cursor
	runSP(t, tab, &c, [2]uint64{0x1000, 100}, [2]uint64{0x1002, 100}, [2]uint64{0x1002, 100})
	deriveAll(t, tab)
	ret := deriveOne(t, tab, []bool{false, false, true}, 0x1008, "the loop's exit block")
	for _, stops := range [][]jump.Stop{{{Addr: 0x1008}}, {{Addr: 0x1008}, {Addr: 0x1000}}} {
		tab.cnt.Hits[ret] = 99
		if bad, _ := tab.DeriveFlow(tab.cnt, stops); bad != 0 {
			t.Errorf("stops %v: %d inconsistent functions", stops, bad)
		}
		if tab.cnt.Hits[ret] != 0 {
			t.Errorf("stops %v: the exit block derived %d, want 0", stops, tab.cnt.Hits[ret])
		}
		// A stop at the entry before it began changes nothing: its
		// arrivals are a variable, not counted until it begins.
		if edges, arr := counts(tab, 0); !slices.Equal(edges, []uint64{1, 1, 0}) || !slices.Equal(arr, []uint64{1, 0, 0}) {
			t.Errorf("stops %v: edges %v arrivals %v, want [1 1 0] [1 0 0]", stops, edges, arr)
		}
	}
	tab.cnt.Hits[ret] = 99
	tab.DeriveFlow(tab.cnt, []jump.Stop{{Addr: 0x1008, Entered: true}})
	if tab.cnt.Hits[ret] != 1 {
		t.Errorf("entered: the exit block derived %d, want 1", tab.cnt.Hits[ret])
	}
}

// trapBeforeFlagsSource has, at -O0, a block of one nop before the loop's
// increment (the target of both continues, too short for any patch) and,
// beside it, the block that sets the bit, whose variable shift keeps the
// flags live: the nop's count follows only when that block is measured.
const trapBeforeFlagsSource = `#include <string.h>

struct coll { const char *name; };

unsigned long matches(int n, struct coll **a, struct coll **b)
{
	unsigned long m = 0;
	for (int i = 0; i < n; i++) {
		if (a[i]->name == 0 || strcmp(a[i]->name, b[i]->name)) {
			continue;
		}
		m |= 1UL << i;
	}
	return m;
}

int main(int argc, char **argv)
{
	struct coll x = {"a"}, y = {"a"}, z = {"b"};
	struct coll *a[3] = {&x, &y, &z}, *b[3] = {&y, &z, &z};
	return (int)matches(argc + 2, a, b);
}
`

// TestDeriveTrapBeforeFlags: a block that can take no patch is derived
// before one whose update keeps the flags, which is measured instead when
// only one of the two can follow from the others: a trap costs a stop at
// every hit, the update a few instructions. Before, matches's nop block
// kept its breakpoint (SQLite's wherePathSatisfiesOrderBy had the same
// shape, the one int3 that kept an attached driver from running without
// system-call stops).
func TestDeriveTrapBeforeFlags(t *testing.T) {
	sym, p, fg := planSourceFunc(t, "matches.c", trapBeforeFlagsSource, "-O0", "matches")
	tab := p.Table
	derived := make([]bool, len(fg.Graph.Blocks))
	nops := 0
	for b, bl := range fg.Graph.Blocks {
		i, ok := tab.Index(bl.Start)
		if !ok {
			continue
		}
		derived[b] = tab.Derived(i)
		if r := tab.KeptReason(i); r != "" && !tab.Derived(i) {
			t.Errorf("matches's block at %#x keeps its breakpoint: %s", bl.Start, r)
		}
		if code, ok := sym.Code(bl.Start, 1); ok && bl.End-bl.Start == 1 && code[0] == 0x90 {
			nops++
			if !tab.Derived(i) {
				t.Errorf("the nop block at %#x is measured", bl.Start)
			}
		}
	}
	if nops == 0 {
		t.Skip("gcc compiled matches without a block of one nop")
	}
	if _, ok := jump.PlanDerive(fg.Graph, derived); !ok {
		t.Errorf("matches's derived blocks %v do not follow from the others", derived)
	}
}
