package breakpoint

import (
	"bytes"
	"errors"
	"math/rand"
	"slices"
	"testing"

	"github.com/patchprof/patchprof/breakpoint/relocate"
)

func TestNewTableMergesSpecsAtOneAddress(t *testing.T) {
	specs := []SiteSpec{
		{Addr: 0x30, Kind: KindLine, Func: 1, Lines: []int32{4}},
		{Addr: 0x10, Kind: KindLine, Func: 0, Lines: []int32{1, 2}},
		{Addr: 0x20, Kind: KindLine, Func: 0, Lines: []int32{3}, Rep: true, Len: 2},
		{Addr: 0x10, Kind: KindFunc, Func: 0, Entry: true},
		{Addr: 0x10, Kind: KindLine, Func: 0, Lines: []int32{2, 0}},
		{Addr: 0x30, Kind: KindLine, Func: -1, Lines: []int32{4}},
		{Addr: 0x40, Kind: KindFunc, Func: -1, Entry: true},
		{Addr: 0x40, Kind: KindFunc, Func: 2},
	}
	orig := slices.Clone(specs)
	tab := NewTable(specs, 5)
	if !slices.EqualFunc(specs, orig, func(a, b SiteSpec) bool {
		return a.Addr == b.Addr && a.Kind == b.Kind && slices.Equal(a.Lines, b.Lines)
	}) {
		t.Errorf("NewTable reordered or changed its argument")
	}

	type site struct {
		addr      uint64
		kind      Kind
		fn        int32
		entry     bool
		rep       bool
		insnLen   int
		lines     []int32
		armed     bool
		origByte  byte
		hits      uint64
		runtime   uint64
		lookupIdx int
	}
	want := []site{
		{addr: 0x10, kind: KindLine | KindFunc, fn: 0, entry: true, lines: []int32{1, 2, 0}},
		{addr: 0x20, kind: KindLine, fn: 0, rep: true, insnLen: 2, lines: []int32{3}},
		{addr: 0x30, kind: KindLine, fn: 1, lines: []int32{4}},
		{addr: 0x40, kind: KindFunc, fn: 2, entry: true, lines: []int32{}},
	}
	if tab.Len() != len(want) {
		t.Fatalf("Len() = %d, want %d", tab.Len(), len(want))
	}
	if len(tab.cnt.Hits) != len(want) || len(tab.cnt.LineEntries) != 5 {
		t.Fatalf("len(Hits), len(LineEntries) = %d, %d, want %d, 5", len(tab.cnt.Hits), len(tab.cnt.LineEntries), len(want))
	}
	for i, w := range want {
		if got := tab.Addr(i); got != w.addr {
			t.Errorf("site %d: Addr = %#x, want %#x", i, got, w.addr)
		}
		if got := tab.Kind(i); got != w.kind {
			t.Errorf("site %d: Kind = %v, want %v", i, got, w.kind)
		}
		if got := tab.Func(i); got != w.fn {
			t.Errorf("site %d: Func = %d, want %d", i, got, w.fn)
		}
		if got := tab.IsEntry(i); got != w.entry {
			t.Errorf("site %d: IsEntry = %v, want %v", i, got, w.entry)
		}
		if got := tab.IsRep(i); got != w.rep {
			t.Errorf("site %d: IsRep = %v, want %v", i, got, w.rep)
		}
		if got := tab.InsnLen(i); got != w.insnLen {
			t.Errorf("site %d: InsnLen = %d, want %d", i, got, w.insnLen)
		}
		if got := tab.Lines(i); !slices.Equal(got, w.lines) {
			t.Errorf("site %d: Lines = %v, want %v", i, got, w.lines)
		}
		if tab.Armed(i) {
			t.Errorf("site %d: armed before Plant", i)
		}
	}
}

func TestNewTableEmpty(t *testing.T) {
	for _, tab := range []*Table{NewTable(nil, 0), {}} {
		if tab.Len() != 0 {
			t.Errorf("Len() = %d, want 0", tab.Len())
		}
		if _, ok := tab.Lookup(0); ok {
			t.Errorf("Lookup(0) found a site in an empty table")
		}
		if got := tab.BytesPerSite(); got != 0 {
			t.Errorf("BytesPerSite() = %v, want 0", got)
		}
		mem := newFakeMemory(0, 16)
		if err := tab.Plant(mem); err != nil {
			t.Errorf("Plant: %v", err)
		}
		if err := tab.Restore(mem); err != nil {
			t.Errorf("Restore: %v", err)
		}
		if mem.reads+mem.writes != 0 {
			t.Errorf("empty table made %d reads and %d writes", mem.reads, mem.writes)
		}
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindLine: "line", KindFunc: "func", KindLine | KindFunc: "line,func", 0: "kind(0)", 8: "kind(8)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
}

// lineSpecs returns one KindLine site per address, site i on line i.
func lineSpecs(addrs []uint64) []SiteSpec {
	specs := make([]SiteSpec, len(addrs))
	for i, a := range addrs {
		specs[i] = SiteSpec{Addr: a, Kind: KindLine, Func: 0, Lines: []int32{int32(i)}}
	}
	return specs
}

func TestLookupAndIndexWithBias(t *testing.T) {
	addrs := []uint64{0x1000, 0x1004, 0x1ffc, 0x2000, 0x5000}
	tab := NewTable(lineSpecs(addrs), len(addrs))
	const bias = 0x5555_5555_4000
	tab.SetBias(bias)
	if tab.Bias() != bias {
		t.Fatalf("Bias() = %#x, want %#x", tab.Bias(), bias)
	}
	for i, a := range addrs {
		if got := tab.RuntimeAddr(i); got != a+bias {
			t.Errorf("RuntimeAddr(%d) = %#x, want %#x", i, got, a+bias)
		}
		if got, ok := tab.Lookup(a + bias); !ok || got != i {
			t.Errorf("Lookup(%#x) = %d, %v, want %d, true", a+bias, got, ok, i)
		}
		if got, ok := tab.Index(a); !ok || got != i {
			t.Errorf("Index(%#x) = %d, %v, want %d, true", a, got, ok, i)
		}
		// The link-time address is not a runtime address once biased.
		if _, ok := tab.Lookup(a); ok {
			t.Errorf("Lookup(link-time %#x) found a site", a)
		}
	}
	for _, miss := range []uint64{0, 0xfff, 0x1001, 0x1ffd, 0x4fff, 0x5001, ^uint64(0)} {
		if i, ok := tab.Index(miss); ok {
			t.Errorf("Index(%#x) = %d, true, want no site", miss, i)
		}
		if i, ok := tab.Lookup(miss + bias); ok {
			t.Errorf("Lookup(%#x) = %d, true, want no site", miss+bias, i)
		}
	}
}

// distinctPages returns how many pages the runtime addresses of tab touch.
func distinctPages(tab *Table) int {
	pages := map[uint64]bool{}
	for i := 0; i < tab.Len(); i++ {
		pages[tab.RuntimeAddr(i)/PageSize] = true
	}
	return len(pages)
}

// checkPlanted checks that mem holds an int3 at every site of tab, the bytes of
// before everywhere else, and that the table saved the original bytes.
func checkPlanted(t *testing.T, tab *Table, mem *fakeMemory, before []byte) {
	t.Helper()
	want := slices.Clone(before)
	for i := 0; i < tab.Len(); i++ {
		off := tab.RuntimeAddr(i) - mem.base
		if got := tab.OriginalByte(i); got != before[off] {
			t.Errorf("site %d at %#x: OriginalByte = %#x, want %#x", i, tab.RuntimeAddr(i), got, before[off])
		}
		if !tab.Armed(i) {
			t.Errorf("site %d at %#x: not armed after Plant", i, tab.RuntimeAddr(i))
		}
		want[off] = relocate.Int3
	}
	if !bytes.Equal(mem.mem, want) {
		for k := range want {
			if mem.mem[k] != want[k] {
				t.Fatalf("memory at %#x = %#x, want %#x (first difference)", mem.base+uint64(k), mem.mem[k], want[k])
			}
		}
	}
}

func TestPlantAndRestore(t *testing.T) {
	const base = 0x40_0000
	// Link-time addresses around the page boundaries at base+0x1000 and
	// base+0x2000; the biases move the boundaries between the sites.
	addrs := []uint64{base, base + 0x0ff0, base + 0x0ff8, base + 0x1008, base + 0x1ff8, base + 0x2000, base + 0x2001, base + 0x3fff}
	for _, tc := range []struct {
		name  string
		bias  uint64
		pages int
	}{
		// Pages, as offsets from base, of the sites 0, ff0, ff8, 1008, 1ff8,
		// 2000, 2001, 3fff after adding the bias:
		{"bias 0", 0, 4},             // {0 ff0 ff8} {1008 1ff8} {2000 2001} {3fff}
		{"bias 0x10", 0x10, 4},       // {10} {1000 1008 1018} {2008 2010 2011} {400f}
		{"bias 0x8", 0x8, 4},         // {8 ff8} {1000 1010} {2000 2008 2009} {4007}
		{"bias 1 page", PageSize, 4}, // page-aligned: the grouping of bias 0
		{"bias 0xfff", 0xfff, 5},     // {fff} {1fef 1ff7} {2007 2ff7 2fff} {3000} {4ffe}
		{"bias 0x1001", 0x1001, 4},   // {1001 1ff1 1ff9} {2009 2ff9} {3001 3002} {5000}
		{"bias PIE-like", 0x7f00, 4}, // {7f00} {8ef0 8ef8 8f08} {9ef8 9f00 9f01} {bdff}
		{"bias 0x80000", 0x80000, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := NewTable(lineSpecs(addrs), len(addrs))
			tab.SetBias(tc.bias)
			if got := distinctPages(tab); got != tc.pages {
				t.Fatalf("test table touches %d pages, want %d: fix the test", got, tc.pages)
			}
			mem := newFakeMemory(base+tc.bias-PageSize, 6*PageSize)
			before := mem.snapshot()

			if err := tab.Plant(mem); err != nil {
				t.Fatalf("Plant: %v", err)
			}
			if mem.reads != tc.pages || mem.writes != tc.pages {
				t.Errorf("Plant made %d reads and %d writes, want %d of each (one per page)", mem.reads, mem.writes, tc.pages)
			}
			for p, n := range mem.writtenPages {
				if n != 1 {
					t.Errorf("Plant wrote page %#x %d times", p*PageSize, n)
				}
			}
			checkPlanted(t, tab, mem, before)

			mem.resetCounts()
			if err := tab.Restore(mem); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if mem.reads != tc.pages || mem.writes != tc.pages {
				t.Errorf("Restore made %d reads and %d writes, want %d of each", mem.reads, mem.writes, tc.pages)
			}
			if !bytes.Equal(mem.mem, before) {
				t.Errorf("memory after Restore differs from memory before Plant")
			}
			for i := 0; i < tab.Len(); i++ {
				if tab.Armed(i) {
					t.Errorf("site %d armed after Restore", i)
				}
			}

			// A second Restore has nothing armed and must not touch memory.
			mem.resetCounts()
			if err := tab.Restore(mem); err != nil {
				t.Fatalf("second Restore: %v", err)
			}
			if mem.reads+mem.writes != 0 {
				t.Errorf("Restore of a restored table made %d reads and %d writes", mem.reads, mem.writes)
			}
		})
	}
}

func TestPlantRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 50; iter++ {
		const size = 16 * PageSize
		n := 1 + rng.Intn(300)
		seen := map[uint64]bool{}
		var addrs []uint64
		for len(addrs) < n {
			a := 0x1000 + uint64(rng.Intn(size-2*PageSize))
			if !seen[a] {
				seen[a] = true
				addrs = append(addrs, a)
			}
		}
		bias := uint64(rng.Intn(1 << 20))
		tab := NewTable(lineSpecs(addrs), n)
		tab.SetBias(bias)
		for i := 1; i < tab.Len(); i++ {
			if tab.Addr(i-1) >= tab.Addr(i) {
				t.Fatalf("addresses not sorted and unique: %#x then %#x", tab.Addr(i-1), tab.Addr(i))
			}
		}
		mem := newFakeMemory(0x1000+bias-PageSize, size)
		before := mem.snapshot()
		if err := tab.Plant(mem); err != nil {
			t.Fatalf("iteration %d: Plant: %v", iter, err)
		}
		pages := distinctPages(tab)
		if mem.reads != pages || mem.writes != pages || len(mem.writtenPages) != pages {
			t.Errorf("iteration %d: %d sites on %d pages: %d reads, %d writes to %d pages", iter, n, pages, mem.reads, mem.writes, len(mem.writtenPages))
		}
		checkPlanted(t, tab, mem, before)
		if err := tab.Restore(mem); err != nil {
			t.Fatalf("iteration %d: Restore: %v", iter, err)
		}
		if !bytes.Equal(mem.mem, before) {
			t.Fatalf("iteration %d: memory after Restore differs", iter)
		}
	}
}

func TestPlantTwiceKeepsOriginalBytes(t *testing.T) {
	addrs := []uint64{0x1010, 0x1020, 0x2030}
	tab := NewTable(lineSpecs(addrs), len(addrs))
	mem := newFakeMemory(0x1000, 2*PageSize)
	before := mem.snapshot()
	if err := tab.Plant(mem); err != nil {
		t.Fatal(err)
	}
	if err := tab.Plant(mem); err != nil {
		t.Fatal(err)
	}
	checkPlanted(t, tab, mem, before) // OriginalByte is not relocate.Int3
	if err := tab.Restore(mem); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mem.mem, before) {
		t.Errorf("memory after Plant, Plant, Restore differs from before")
	}
}

func TestPlantSiteOverOriginalInt3(t *testing.T) {
	// The target's own int3 (a debugger trap compiled in) is a legitimate
	// original byte: Restore must put it back, not lose it.
	tab := NewTable(lineSpecs([]uint64{0x1008}), 1)
	mem := newFakeMemory(0x1000, PageSize)
	mem.mem[8] = relocate.Int3
	before := mem.snapshot()
	if err := tab.Plant(mem); err != nil {
		t.Fatal(err)
	}
	if tab.OriginalByte(0) != relocate.Int3 {
		t.Errorf("OriginalByte = %#x, want %#x", tab.OriginalByte(0), relocate.Int3)
	}
	if err := tab.Restore(mem); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mem.mem, before) {
		t.Errorf("memory after Restore differs")
	}
}

func TestDisarmInArmIn(t *testing.T) {
	addrs := []uint64{0x1010, 0x1011, 0x1ff0}
	tab := NewTable(lineSpecs(addrs), len(addrs))
	const bias = 0x1_0000
	tab.SetBias(bias)
	mem := newFakeMemory(0x1000+bias, PageSize)
	before := mem.snapshot()
	if err := tab.Plant(mem); err != nil {
		t.Fatal(err)
	}
	planted := mem.snapshot()

	// A forked child: its own copy of the address space.
	child := &fakeMemory{base: mem.base, mem: mem.snapshot(), writtenPages: map[uint64]int{}}

	mem.resetCounts()
	if err := tab.DisarmIn(mem, 1); err != nil {
		t.Fatal(err)
	}
	if mem.writes != 1 || mem.reads != 0 {
		t.Errorf("DisarmIn: %d reads, %d writes, want 0 and 1", mem.reads, mem.writes)
	}
	want := slices.Clone(planted)
	want[0x11] = before[0x11]
	if !bytes.Equal(mem.mem, want) {
		t.Errorf("DisarmIn changed more than site 1's byte, or not that")
	}
	if !tab.Armed(1) {
		t.Errorf("DisarmIn cleared the table's armed flag; it is per address space")
	}
	if !bytes.Equal(child.mem, planted) {
		t.Errorf("DisarmIn in the parent changed the child")
	}

	mem.resetCounts()
	if err := tab.ArmIn(mem, 1); err != nil {
		t.Fatal(err)
	}
	if mem.writes != 1 || mem.reads != 0 {
		t.Errorf("ArmIn: %d reads, %d writes, want 0 and 1", mem.reads, mem.writes)
	}
	if !bytes.Equal(mem.mem, planted) {
		t.Errorf("ArmIn did not restore the planted state")
	}

	// Disarm everything one by one: the original image.
	for i := 0; i < tab.Len(); i++ {
		if err := tab.DisarmIn(mem, i); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(mem.mem, before) {
		t.Errorf("DisarmIn of every site did not give the original image")
	}
}

func TestPlantErrors(t *testing.T) {
	const base = 0x1000
	addrs := []uint64{base + 0x10, base + 0x20, base + 0x1010, base + 0x1020, base + 0x2ff0}
	const bias = 0x100
	for _, tc := range []struct {
		name     string
		op       string
		failAddr uint64 // runtime
		wantAddr uint64 // PlantError.Addr: the start of the failing span
		restore  bool   // fail on Restore rather than Plant
	}{
		{"read first page", "read", base + bias + 0x10, base + bias + 0x10, false},
		{"read second page", "read", base + bias + 0x1020, base + bias + 0x1010, false},
		{"write third page", "write", base + bias + 0x2ff0, base + bias + 0x2ff0, false},
		{"restore read", "read", base + bias + 0x15, base + bias + 0x10, true},
		{"restore write", "write", base + bias + 0x1010, base + bias + 0x1010, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := NewTable(lineSpecs(addrs), len(addrs))
			tab.SetBias(bias)
			mem := newFakeMemory(base+bias, 4*PageSize)
			if tc.restore {
				if err := tab.Plant(mem); err != nil {
					t.Fatal(err)
				}
			}
			mem.failOp, mem.failAddr = tc.op, tc.failAddr
			var err error
			if tc.restore {
				err = tab.Restore(mem)
			} else {
				err = tab.Plant(mem)
			}
			var pe *PlantError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *PlantError", err, err)
			}
			if pe.Op != tc.op || pe.Addr != tc.wantAddr {
				t.Errorf("PlantError{Op: %q, Addr: %#x}, want {%q, %#x}", pe.Op, pe.Addr, tc.op, tc.wantAddr)
			}
			if !errors.Is(err, errFake) {
				t.Errorf("error %v does not wrap the memory's error", err)
			}
			if pe.Error() == "" {
				t.Errorf("empty message")
			}
			// Sites on the failing page and after it keep their state.
			for i := 0; i < tab.Len(); i++ {
				failed := tab.RuntimeAddr(i) >= tc.wantAddr
				if tab.Armed(i) != (tc.restore == failed) {
					t.Errorf("site %d at %#x: Armed = %v after the error", i, tab.RuntimeAddr(i), tab.Armed(i))
				}
			}
		})
	}

	t.Run("DisarmIn and ArmIn", func(t *testing.T) {
		tab := NewTable(lineSpecs(addrs), len(addrs))
		tab.SetBias(bias)
		mem := newFakeMemory(base+bias, 4*PageSize)
		if err := tab.Plant(mem); err != nil {
			t.Fatal(err)
		}
		mem.failOp, mem.failAddr = "write", tab.RuntimeAddr(3)
		for name, f := range map[string]func(Memory, int) error{"DisarmIn": tab.DisarmIn, "ArmIn": tab.ArmIn} {
			var pe *PlantError
			if err := f(mem, 3); !errors.As(err, &pe) || pe.Addr != tab.RuntimeAddr(3) || pe.Op != "write" {
				t.Errorf("%s: error %v, want a *PlantError for a write at %#x", name, err, tab.RuntimeAddr(3))
			}
			if err := f(mem, 2); err != nil {
				t.Errorf("%s of another site: %v", name, err)
			}
		}
	})

	t.Run("short transfers", func(t *testing.T) {
		tab := NewTable(lineSpecs(addrs), len(addrs))
		mem := newFakeMemory(base, 4*PageSize)
		mem.short = true
		var pe *PlantError
		if err := tab.Plant(mem); !errors.As(err, &pe) || pe.Op != "read" {
			t.Errorf("Plant with short reads: %v, want a read *PlantError", err)
		}
		if err := tab.DisarmIn(mem, 0); !errors.As(err, &pe) || pe.Op != "write" {
			t.Errorf("DisarmIn with short writes: %v, want a write *PlantError", err)
		}
	})
}

func TestBytesPerSite(t *testing.T) {
	const n = 100_000
	tab := NewTable(spreadSpecs(n, 4<<20), n)
	if tab.Len() != n {
		t.Fatalf("Len() = %d, want %d", tab.Len(), n)
	}
	if got := tab.BytesPerSite(); got >= 100 {
		t.Errorf("BytesPerSite() = %.1f, want < 100 (docs/design.md)", got)
	}
}
