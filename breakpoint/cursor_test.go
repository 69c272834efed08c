package breakpoint

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
)

// A row is one hand-made line site for cursor tests.
type row struct {
	addr  uint64
	fn    int32
	lines []int32
	entry bool // the function's entry: a KindFunc site too
}

// rowTable builds a table of line sites from rows; numLines lines.
func rowTable(t *testing.T, numLines int, rows ...row) *Table {
	t.Helper()
	var specs []SiteSpec
	for _, r := range rows {
		specs = append(specs, SiteSpec{Addr: r.addr, Kind: KindLine, Func: r.fn, Lines: r.lines, Entry: r.entry})
		if r.entry {
			specs = append(specs, SiteSpec{Addr: r.addr, Kind: KindFunc, Func: r.fn, Entry: true})
		}
	}
	tab := NewTable(specs, numLines)
	if tab.Len() != len(rows) {
		t.Fatalf("rows at duplicate addresses: %d sites from %d rows", tab.Len(), len(rows))
	}
	return tab
}

// run hits the sites at the link-time addresses trace with cursor c, all at
// one stack pointer: activations are then told apart only by entry traps.
func run(t *testing.T, tab *Table, c *Cursor, trace ...uint64) {
	t.Helper()
	for _, a := range trace {
		i, ok := tab.Index(a)
		if !ok {
			t.Fatalf("no site at %#x", a)
		}
		tab.Hit(c, i, 0)
	}
}

// runSP hits (address, stack pointer) pairs.
func runSP(t *testing.T, tab *Table, c *Cursor, trace ...[2]uint64) {
	t.Helper()
	for _, x := range trace {
		i, ok := tab.Index(x[0])
		if !ok {
			t.Fatalf("no site at %#x", x[0])
		}
		tab.Hit(c, i, x[1])
	}
}

func checkEntries(t *testing.T, tab *Table, want ...uint64) {
	t.Helper()
	if !slices.Equal(tab.cnt.LineEntries, want) {
		t.Errorf("LineEntries = %v, want %v", tab.cnt.LineEntries, want)
	}
}

// A C function as gcc -O0 lays it out:
//
//	line 0: int f(int n) {
//	line 1:     for (int i = 0; i < n; i++)
//	line 2:         s += i;
//	line 3:     return s;
//	line 4: }
//
// The for line has three rows: init, then (after the body) incr and cond,
// reached from init by a forward jump to cond.
var forLoop = []row{
	{addr: 0x00, fn: 0, lines: []int32{0}, entry: true},
	{addr: 0x08, fn: 0, lines: []int32{1}}, // init; jmp cond
	{addr: 0x10, fn: 0, lines: []int32{2}}, // body
	{addr: 0x18, fn: 0, lines: []int32{1}}, // incr
	{addr: 0x1c, fn: 0, lines: []int32{1}}, // cond; jl body
	{addr: 0x24, fn: 0, lines: []int32{3}},
	{addr: 0x2c, fn: 0, lines: []int32{4}},
}

// forTrace returns the addresses one call of forLoop traps at when the body
// runs n times.
func forTrace(n int) []uint64 {
	tr := []uint64{0x00, 0x08, 0x1c}
	for range n {
		tr = append(tr, 0x10, 0x18, 0x1c)
	}
	return append(tr, 0x24, 0x2c)
}

func TestCursorForLoop(t *testing.T) {
	for n := range 5 {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			tab := rowTable(t, 5, forLoop...)
			var c Cursor
			run(t, tab, &c, forTrace(n)...)
			// gcov: the for line is entered n+1 times, the body n.
			checkEntries(t, tab, 1, uint64(n+1), uint64(n), 1, 1)
			wantHits := []uint64{1, 1, uint64(n), uint64(n), uint64(n + 1), 1, 1}
			if !slices.Equal(tab.cnt.Hits, wantHits) {
				t.Errorf("Hits = %v, want %v", tab.cnt.Hits, wantHits)
			}

			// A second call counts again, from its entry.
			run(t, tab, &c, forTrace(n)...)
			checkEntries(t, tab, 2, uint64(2*n+2), uint64(2*n), 2, 2)
		})
	}
}

func TestCursorLoopOnOneLine(t *testing.T) {
	// line 1: while (*p) p++;   two rows on one line, the second jumps back
	// to the first: every trip round the loop enters the line again.
	tab := rowTable(t, 3,
		row{addr: 0x00, fn: 0, lines: []int32{0}, entry: true},
		row{addr: 0x08, fn: 0, lines: []int32{1}}, // p++
		row{addr: 0x10, fn: 0, lines: []int32{1}}, // cmp *p; jne 0x08
		row{addr: 0x18, fn: 0, lines: []int32{2}},
	)
	var c Cursor
	run(t, tab, &c, 0x00, 0x08, 0x10, 0x08, 0x10, 0x08, 0x10, 0x18)
	checkEntries(t, tab, 1, 3, 1)

	// A loop of a single row (a jump to itself) counts each trap.
	tab = rowTable(t, 2,
		row{addr: 0x00, fn: 0, lines: []int32{0}, entry: true},
		row{addr: 0x08, fn: 0, lines: []int32{1}},
	)
	c = Cursor{}
	run(t, tab, &c, 0x00, 0x08, 0x08, 0x08, 0x08)
	checkEntries(t, tab, 1, 4)
}

func TestCursorReturnIntoMiddleOfLine(t *testing.T) {
	//	f, line 0: {
	//	f, line 1:     x = g(y) + 1;   rows before and after the call
	//	f, line 2: }
	//	g, line 3: int g(int y) {
	//	g, line 4:     return y;
	tab := rowTable(t, 5,
		row{addr: 0x100, fn: 0, lines: []int32{0}, entry: true},
		row{addr: 0x108, fn: 0, lines: []int32{1}}, // mov y, %edi; call g
		row{addr: 0x110, fn: 0, lines: []int32{1}}, // add $1, %eax; mov %eax, x
		row{addr: 0x118, fn: 0, lines: []int32{2}},
		row{addr: 0x200, fn: 1, lines: []int32{3}, entry: true},
		row{addr: 0x208, fn: 1, lines: []int32{4}},
	)
	var c Cursor
	run(t, tab, &c, 0x100, 0x108, 0x200, 0x208, 0x110, 0x118)
	checkEntries(t, tab, 1, 1, 1, 1, 1)

	// The same line calling g twice: x = g(1) + g(2), rows between calls.
	tab = rowTable(t, 5,
		row{addr: 0x100, fn: 0, lines: []int32{0}, entry: true},
		row{addr: 0x108, fn: 0, lines: []int32{1}}, // call g
		row{addr: 0x110, fn: 0, lines: []int32{1}}, // call g
		row{addr: 0x118, fn: 0, lines: []int32{1}}, // add
		row{addr: 0x120, fn: 0, lines: []int32{2}},
		row{addr: 0x200, fn: 1, lines: []int32{3}, entry: true},
		row{addr: 0x208, fn: 1, lines: []int32{4}},
	)
	c = Cursor{}
	run(t, tab, &c, 0x100, 0x108, 0x200, 0x208, 0x110, 0x200, 0x208, 0x118, 0x120)
	checkEntries(t, tab, 1, 1, 1, 2, 2)
}

func TestCursorRecursion(t *testing.T) {
	//	line 0: int fact(int n) {
	//	line 1:     if (n == 0) return 1;
	//	line 2:     return n * fact(n - 1);   call, then multiply
	//	line 3: }
	tab := rowTable(t, 4,
		row{addr: 0x100, fn: 0, lines: []int32{0}, entry: true},
		row{addr: 0x108, fn: 0, lines: []int32{1}},
		row{addr: 0x110, fn: 0, lines: []int32{1}}, // return 1
		row{addr: 0x118, fn: 0, lines: []int32{2}}, // call
		row{addr: 0x120, fn: 0, lines: []int32{2}}, // imul
		row{addr: 0x128, fn: 0, lines: []int32{3}},
	)
	var c Cursor
	// fact(2): two recursive calls. Each activation's entry trap is at the
	// SP of its return address; its body runs 16 bytes lower.
	runSP(t, tab, &c,
		[2]uint64{0x100, 1000}, [2]uint64{0x108, 984}, [2]uint64{0x118, 984}, // fact(2)
		[2]uint64{0x100, 900}, [2]uint64{0x108, 884}, [2]uint64{0x118, 884}, // fact(1)
		[2]uint64{0x100, 800}, [2]uint64{0x108, 784}, [2]uint64{0x110, 784}, [2]uint64{0x128, 784}, // fact(0)
		[2]uint64{0x120, 884}, [2]uint64{0x128, 884}, // back in fact(1)
		[2]uint64{0x120, 984}, [2]uint64{0x128, 984}, // back in fact(2)
	)
	// The multiply after a return continues line 2 of its own activation:
	// not a new entry, as gcov counts it. Line 2 is entered once per call
	// that recursed.
	checkEntries(t, tab, 3, 3, 2, 3)
}

func TestCursorEntryFlag(t *testing.T) {
	// A function whose entry is not its lowest address (a block placed before
	// it). Without the Entry flag the second call would continue on line 0.
	tab := rowTable(t, 2,
		row{addr: 0x0f0, fn: 0, lines: []int32{0}}, // cold block, line 0
		row{addr: 0x100, fn: 0, lines: []int32{0}, entry: true},
		row{addr: 0x108, fn: 0, lines: []int32{1}},
	)
	var c Cursor
	run(t, tab, &c, 0x100, 0x0f0, 0x100)
	checkEntries(t, tab, 3, 0)

	// The same rows without the flag: 0x0f0 -> 0x100 is a forward move on
	// one line.
	tab = NewTable([]SiteSpec{
		{Addr: 0x0f0, Kind: KindLine, Func: 0, Lines: []int32{0}},
		{Addr: 0x100, Kind: KindLine, Func: 0, Lines: []int32{0}},
	}, 1)
	c = Cursor{}
	run(t, tab, &c, 0x100, 0x0f0, 0x100)
	checkEntries(t, tab, 2)
}

func TestCursorTwoLinesAtOneAddress(t *testing.T) {
	// A row where two lines start at once (an empty statement folded into the
	// next, or a macro), then rows of only one of them.
	tab := rowTable(t, 3,
		row{addr: 0x00, fn: 0, lines: []int32{0, 1}, entry: true},
		row{addr: 0x08, fn: 0, lines: []int32{1}},
		row{addr: 0x10, fn: 0, lines: []int32{1, 2}},
		row{addr: 0x18, fn: 0, lines: []int32{0}},
	)
	var c Cursor
	run(t, tab, &c, 0x00)
	checkEntries(t, tab, 1, 1, 0)
	run(t, tab, &c, 0x08) // still on line 1
	checkEntries(t, tab, 1, 1, 0)
	run(t, tab, &c, 0x10) // line 2 entered, line 1 continues
	checkEntries(t, tab, 1, 1, 1)
	run(t, tab, &c, 0x18) // back to line 0
	checkEntries(t, tab, 2, 1, 1)
	run(t, tab, &c, 0x00) // a new call: both lines
	checkEntries(t, tab, 3, 2, 1)
}

func TestCursorFunctionsAreIndependent(t *testing.T) {
	// Interleaved hits of two functions (a call, or a signal handler) do not
	// disturb each other's position.
	tab := rowTable(t, 2,
		row{addr: 0x00, fn: 0, lines: []int32{0}},
		row{addr: 0x08, fn: 0, lines: []int32{0}},
		row{addr: 0x100, fn: 1, lines: []int32{1}},
		row{addr: 0x108, fn: 1, lines: []int32{1}},
	)
	var c Cursor
	run(t, tab, &c, 0x00, 0x100, 0x08, 0x108)
	checkEntries(t, tab, 1, 1)
}

func TestCursorFuncSiteOnly(t *testing.T) {
	// A function site without a line counts its trap and opens a new
	// activation: the next line trap is the first of a new call.
	tab := NewTable([]SiteSpec{
		{Addr: 0x00, Kind: KindFunc, Func: 0, Entry: true},
		{Addr: 0x08, Kind: KindLine, Func: 0, Lines: []int32{0}},
		{Addr: 0x10, Kind: KindLine, Func: 0, Lines: []int32{0}},
	}, 1)
	var c Cursor
	run(t, tab, &c, 0x08, 0x00, 0x10)
	checkEntries(t, tab, 2)
	if !slices.Equal(tab.cnt.Hits, []uint64{1, 1, 1}) {
		t.Errorf("Hits = %v, want [1 1 1]", tab.cnt.Hits)
	}
	u := tab.Hit(&c, 0, 0)
	tab.Unhit(&c, u)
	if tab.cnt.Hits[0] != 1 || c.last[0] != 2 {
		t.Errorf("Hit/Unhit of a function site: Hits[0] = %d, cursor at %d", tab.cnt.Hits[0], c.last[0])
	}
}

// state is what a Hit changes: the counts and the cursor.
type state struct {
	hits, entries []uint64
	last          map[int32]int32
}

func snapshotState(tab *Table, c *Cursor) state {
	return state{slices.Clone(tab.cnt.Hits), slices.Clone(tab.cnt.LineEntries), maps.Clone(c.last)}
}

func (s state) equal(o state) bool {
	return slices.Equal(s.hits, o.hits) && slices.Equal(s.entries, o.entries) && maps.Equal(s.last, o.last)
}

func TestCursorUnhit(t *testing.T) {
	rows := append(slices.Clone(forLoop),
		row{addr: 0x200, fn: 1, lines: []int32{5, 6}, entry: true},
		row{addr: 0x208, fn: 1, lines: []int32{6}},
		row{addr: 0x210, fn: 1, lines: []int32{6, 7}},
	)
	sites := make([]uint64, len(rows))
	for i, r := range rows {
		sites[i] = r.addr
	}
	rng := rand.New(rand.NewSource(2))
	var trace []uint64
	for range 500 {
		trace = append(trace, sites[rng.Intn(len(sites))])
	}
	trace = append(trace, forTrace(3)...)

	plain := rowTable(t, 8, rows...)
	var pc Cursor
	run(t, plain, &pc, trace...)

	tab := rowTable(t, 8, rows...)
	var c Cursor
	for k, a := range trace {
		i, _ := tab.Index(a)
		before := snapshotState(tab, &c)
		u := tab.Hit(&c, i, 0)
		once := snapshotState(tab, &c)
		tab.Unhit(&c, u)
		if got := snapshotState(tab, &c); !got.equal(before) {
			t.Fatalf("step %d (%#x): Unhit left %+v, want %+v", k, a, got, before)
		}
		// The trap is taken again (the instruction runs this time): the
		// same result as if the first one had not happened.
		tab.Hit(&c, i, 0)
		if got := snapshotState(tab, &c); !got.equal(once) {
			t.Fatalf("step %d (%#x): Hit, Unhit, Hit left %+v, want %+v", k, a, got, once)
		}
	}
	if got, want := snapshotState(tab, &c), snapshotState(plain, &pc); !got.equal(want) {
		t.Errorf("trace with Unhits ended at %+v, without at %+v", got, want)
	}
	checkEntries(t, tab, plain.cnt.LineEntries...)
}

func TestCursorClone(t *testing.T) {
	tab := rowTable(t, 5, forLoop...)
	var parent Cursor
	run(t, tab, &parent, 0x00, 0x08) // on the for line, at init

	child := parent.Clone()
	// The child continues on the for line: not an entry.
	run(t, tab, &child, 0x1c)
	checkEntries(t, tab, 1, 1, 0, 0, 0)
	// The child's move did not move the parent: the parent at init still
	// continues on its line too.
	run(t, tab, &parent, 0x1c)
	checkEntries(t, tab, 1, 1, 0, 0, 0)
	run(t, tab, &child, 0x10, 0x18)
	checkEntries(t, tab, 1, 2, 1, 0, 0)
	if parent.last[0] == child.last[0] {
		t.Errorf("parent and child share a position after different hits")
	}

	// Cloning an unused cursor works and gives a usable cursor.
	var zero Cursor
	z := zero.Clone()
	run(t, tab, &z, 0x24)
	if len(zero.last) != 0 {
		t.Errorf("hits through a clone changed the zero cursor it came from")
	}
}
