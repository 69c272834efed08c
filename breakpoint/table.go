package breakpoint

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// PageSize is the granularity of planting: one read and one write per touched
// page. x86-64 Linux user pages are 4 KiB.
const PageSize = 4096

// Memory reads and writes the target's address space. The monitor backs it with
// /proc/PID/mem, which (unlike process_vm_writev) can write to read-only code
// pages of a traced process.
type Memory interface {
	ReadMemory(addr uint64, buf []byte) (int, error)
	WriteMemory(addr uint64, buf []byte) (int, error)
}

// Kind says what a site counts.
type Kind uint8

const (
	// KindLine marks a site at a line-table row.
	KindLine Kind = 1 << iota
	// KindFunc marks a site at a function entry.
	KindFunc
	// KindBlock marks a site at the start of a basic block (--blocks).
	KindBlock
)

// String returns the kinds of k joined by commas, in the order line, func,
// block: "line", "func", "line,func", "block", "line,block", ...
func (k Kind) String() string {
	if k == 0 || k&^(KindLine|KindFunc|KindBlock) != 0 {
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
	s := ""
	for _, n := range [...]struct {
		k    Kind
		name string
	}{{KindLine, "line"}, {KindFunc, "func"}, {KindBlock, "block"}} {
		if k&n.k != 0 {
			if s != "" {
				s += ","
			}
			s += n.name
		}
	}
	return s
}

// flag bits kept per site beside the Kind.
const (
	flagRep   = 1 << 4 // the instruction is a rep-prefixed string instruction
	flagEntry = 1 << 5 // the site is its function's entry
	flagArmed = 1 << 6 // planted by Plant, not yet removed by Restore
	// flagNotify marks an internal site where the dynamic linker reports a
	// change to its list of loaded objects (r_debug.r_brk, _dl_debug_state):
	// the monitor re-reads the process's mappings after it.
	flagNotify = 1 << 7
	// flagGo marks a site in Go code compiled with the register ABI, where
	// R14 holds the running goroutine: its line-entry position belongs to
	// the goroutine, which can move between OS threads.
	flagGo   = 1 << 3
	kindMask = 0x07
)

// A SiteSpec asks for one site; NewTable turns a list of them into a Table.
type SiteSpec struct {
	Addr  uint64  // link-time address
	Kind  Kind    // what the site counts
	Func  int32   // index of the enclosing function in the caller's list, -1 if none
	Entry bool    // Addr is the entry of Func
	Lines []int32 // indexes of the source lines whose rows start here
	Rep   bool    // the instruction at Addr is a rep-prefixed string instruction
	Len   uint8   // length of the instruction at Addr (needed for Rep sites)
	// Notify asks for an internal site (it may have Kind 0, counting nothing
	// for the report): the dynamic linker's notification point.
	Notify bool
	// Resume asks for an internal site (Kind 0) where a thread returns to
	// code that a saved context interrupted: the return of Go's
	// runtime.asyncPreempt, through which every goroutine stopped by an
	// asynchronous preemption goes back to the instruction it was stopped
	// at (IsResume).
	Resume bool
	// Block is the table-wide index of the basic block starting at Addr
	// (see Table.SetBlocks), meaningful when Kind has KindBlock.
	Block int32
	// Go marks a site in Go code (see Table.IsGo).
	Go bool
}

// Counts are what a run counted at the sites of one table: the one value a
// run's counts travel in, from the tracer that writes them to the reports
// that read a copy (Table.Counts). Each slice is indexed as its comment says.
type Counts struct {
	// Hits counts the hits of each site, by site index: the raw
	// per-address counts.
	Hits []uint64
	// LineEntries counts, per source line of the sites' rows (Table.Lines;
	// Plan.LineCounts files them under Plan.Lines), how often control
	// entered the line (see Cursor for the definition).
	LineEntries []uint64
	// EdgeCounts counts, per table-wide edge index, how often control went
	// along the edge (see SetBlocks); nil without blocks.
	EdgeCounts []uint64
	// ArcHits counts, per arc the in-process engine counts in the target
	// (ArcsOf), how often control went along it.
	ArcHits []uint64
	// BlockArrivals counts, per table-wide block index, the arrivals at the
	// block along none of its edges: for a function's first block, its
	// entries; for any other, arrivals the cursor could not attribute.
	BlockArrivals []uint64
	// Indirect counts the functions indirect calls entered, by call
	// (SetIndirectCalls); nil when they are not counted.
	Indirect map[IndirectArc]uint64
	// Entries counts, per dispatch whose entries are counted
	// (Plan.CountEntries) by its table-wide block index, the times it
	// jumped through each entry of its table; nil when none is.
	Entries map[int][]uint64
}

// Clone returns a copy of c that shares no memory with it.
func (c *Counts) Clone() *Counts {
	return &Counts{
		Hits:          slices.Clone(c.Hits),
		LineEntries:   slices.Clone(c.LineEntries),
		EdgeCounts:    slices.Clone(c.EdgeCounts),
		ArcHits:       slices.Clone(c.ArcHits),
		BlockArrivals: slices.Clone(c.BlockArrivals),
		Indirect:      maps.Clone(c.Indirect),
		Entries:       cloneEntries(c.Entries),
	}
}

// Counts returns a copy of what the run has counted so far. The tracer
// calls it between stops (a snapshot) and once at the end (its result).
func (t *Table) Counts() *Counts { return t.cnt.Clone() }

// AddHits adds n to site i's hits: the tracer folding what the target
// counted in-process.
func (t *Table) AddHits(i int, n uint64) { t.cnt.Hits[i] += n }

// AddArcHits adds n to arc k's count (ArcsOf).
func (t *Table) AddArcHits(k int, n uint64) { t.cnt.ArcHits[k] += n }

// A Table holds the sites of one executable image, sorted by address. Sites are
// identified by their index. The zero Table is empty.
type Table struct {
	addr      []uint64 // link-time address, sorted, unique
	orig      []byte   // the byte the int3 replaced, valid once planted
	flags     []uint8  // Kind | flag bits
	fn        []int32  // enclosing function index or -1
	insnLen   []uint8  // instruction length (only needed for rep sites)
	lineStart []uint32 // lines of site i are lines[lineStart[i]:lineStart[i+1]]
	lines     []int32

	// cnt is what the run counted; the table's views at other biases (At)
	// share it. Only the tracer writes it, through the cursor, AddHits
	// and AddArcHits; readers take a copy (Counts).
	cnt *Counts

	siteBlock []int32                // per site: table-wide block index, -1; nil without blocks
	resume    map[int]bool           // the Resume sites, nil if none
	blk       *blockGraph            // the flow graphs of the block-counted functions
	jump      *jumpInfo              // the in-process engine's plan (PlanJumps), nil without
	indirect  map[int32]IndirectCall // blocks ending in an indirect call or tail jump (SetIndirectCalls)
	entries   map[int]EntrySite      // by site: dispatches whose entries are counted (entries.go)
	entryList []EntrySite            // the same, by site

	bias      uint64 // runtime address = link-time address + bias
	callTraps bool   // entry checks trap past their slots (SetCallTraps)
}

// NewTable builds a table from specs. Specs at the same address are merged
// (kinds and lines united). numLines is the size of the caller's line list.
func NewTable(specs []SiteSpec, numLines int) *Table {
	sorted := make([]SiteSpec, len(specs))
	copy(sorted, specs)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Addr < sorted[j].Addr })
	t := &Table{cnt: &Counts{LineEntries: make([]uint64, numLines)}}
	for i := 0; i < len(sorted); {
		s := sorted[i]
		flags := uint8(s.Kind)
		var ls []int32
		fn := s.Func
		l := s.Len
		blockIdx := int32(-1)
		resume := false
		j := i
		for ; j < len(sorted) && sorted[j].Addr == s.Addr; j++ {
			o := sorted[j]
			flags |= uint8(o.Kind)
			if o.Entry {
				flags |= flagEntry
			}
			if o.Rep {
				flags |= flagRep
			}
			if o.Notify {
				flags |= flagNotify
			}
			resume = resume || o.Resume
			if o.Go {
				flags |= flagGo
			}
			if fn < 0 {
				fn = o.Func
			}
			if o.Len > l {
				l = o.Len
			}
			if o.Kind&KindBlock != 0 {
				blockIdx = o.Block
			}
			for _, x := range o.Lines {
				if !containsInt32(ls, x) {
					ls = append(ls, x)
				}
			}
		}
		t.lineStart = append(t.lineStart, uint32(len(t.lines)))
		t.lines = append(t.lines, ls...)
		t.addr = append(t.addr, s.Addr)
		t.flags = append(t.flags, flags)
		t.fn = append(t.fn, fn)
		t.insnLen = append(t.insnLen, l)
		if resume {
			if t.resume == nil {
				t.resume = map[int]bool{}
			}
			t.resume[len(t.addr)-1] = true
		}
		if blockIdx >= 0 && t.siteBlock == nil {
			t.siteBlock = make([]int32, len(t.addr)-1, len(sorted))
			for k := range t.siteBlock {
				t.siteBlock[k] = -1
			}
		}
		if t.siteBlock != nil {
			t.siteBlock = append(t.siteBlock, blockIdx)
		}
		i = j
	}
	t.lineStart = append(t.lineStart, uint32(len(t.lines)))
	t.orig = make([]byte, len(t.addr))
	t.cnt.Hits = make([]uint64, len(t.addr))
	return t
}

// sizeLines sizes LineEntries for the n lines the sites' rows name
// (NewPlan's pendingLines; Plan.SiteLines gives their numbers in Lines).
func (t *Table) sizeLines(n int) {
	t.cnt.LineEntries = make([]uint64, n)
}

func containsInt32(s []int32, x int32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// FuncSites returns the range [lo, hi) of the sites of site i's function:
// the sites are in address order, a function's together.
func (t *Table) FuncSites(i int) (lo, hi int) {
	fn := t.fn[i]
	lo, hi = i, i+1
	for lo > 0 && t.fn[lo-1] == fn {
		lo--
	}
	for hi < len(t.fn) && t.fn[hi] == fn {
		hi++
	}
	return lo, hi
}

// Len returns the number of sites.
func (t *Table) Len() int { return len(t.addr) }

// Addr returns the link-time address of site i.
func (t *Table) Addr(i int) uint64 { return t.addr[i] }

// RuntimeAddr returns where site i is in the running process.
func (t *Table) RuntimeAddr(i int) uint64 { return t.addr[i] + t.bias }

// Kind returns what site i counts.
func (t *Table) Kind(i int) Kind { return Kind(t.flags[i] & kindMask) }

// Func returns the index of site i's enclosing function, or -1.
func (t *Table) Func(i int) int32 { return t.fn[i] }

// IsEntry reports whether site i is its function's entry.
func (t *Table) IsEntry(i int) bool { return t.flags[i]&flagEntry != 0 }

// IsResume reports whether site i is an internal site where preempted
// goroutines resume (SiteSpec.Resume).
func (t *Table) IsResume(i int) bool { return t.resume[i] }

// IsRep reports whether the instruction at site i is a rep-prefixed string
// instruction, which stays at the same address for several single-steps.
func (t *Table) IsRep(i int) bool { return t.flags[i]&flagRep != 0 }

// IsGo reports whether site i is in Go code, where R14 holds the running
// goroutine (Go's register ABI, ABIInternal): the monitor keys the site's
// line-entry cursor by goroutine rather than by OS thread, since goroutines
// migrate between threads and an activation must follow its goroutine.
func (t *Table) IsGo(i int) bool { return t.flags[i]&flagGo != 0 }

// IsNotify reports whether site i is the dynamic linker's notification point
// (see SiteSpec.Notify).
func (t *Table) IsNotify(i int) bool { return t.flags[i]&flagNotify != 0 }

// InsnLen returns the length of the instruction at site i, when it was recorded
// (rep sites), else 0.
func (t *Table) InsnLen(i int) int { return int(t.insnLen[i]) }

// Lines returns the indexes in Counts.LineEntries of the source lines
// whose rows start at site i (Plan.SiteLines gives them as indexes of
// Plan.Lines). The slice aliases the table; do not modify it.
func (t *Table) Lines(i int) []int32 { return t.lines[t.lineStart[i]:t.lineStart[i+1]] }

// Armed reports whether site i has been planted (and not restored).
func (t *Table) Armed(i int) bool { return t.flags[i]&flagArmed != 0 }

// OriginalByte returns the byte that site i's int3 replaced.
func (t *Table) OriginalByte(i int) byte { return t.orig[i] }

// Bias returns the load bias set by SetBias.
func (t *Table) Bias() uint64 { return t.bias }

// SetBias records where the image is loaded: runtime = link-time + bias. PIE
// executables load at a random base; non-PIE ones have bias 0.
func (t *Table) SetBias(bias uint64) { t.bias = bias }

// At returns a view of t loaded at bias: it shares every site, count and
// planted state with t and differs only in where runtime addresses are. One
// image (a shared library, a program exec'd twice) is loaded at different
// addresses in different processes, and its counts are summed over them.
func (t *Table) At(bias uint64) *Table {
	v := *t
	v.bias = bias
	return &v
}

// Lookup returns the site at runtime address pc.
func (t *Table) Lookup(pc uint64) (int, bool) { return t.Index(pc - t.bias) }

// Index returns the site at link-time address addr.
func (t *Table) Index(addr uint64) (int, bool) {
	// slices.BinarySearch, unlike sort.Search, calls no closure: an eager
	// attach looks up every exit of every trampoline.
	if i, ok := slices.BinarySearch(t.addr, addr); ok {
		return i, true
	}
	return 0, false
}

// From returns the index of the first site at or after link-time address
// addr, Len() if there is none: the sites in a range of code, in order,
// without looking up each of its bytes.
func (t *Table) From(addr uint64) int {
	i, _ := slices.BinarySearch(t.addr, addr)
	return i
}

// BytesPerSite estimates the table's memory per site (the parallel slices and
// the line lists), for the memory benchmark and the README claim.
func (t *Table) BytesPerSite() float64 {
	n := len(t.addr)
	if n == 0 {
		return 0
	}
	total := 8*cap(t.addr) + cap(t.orig) + cap(t.flags) + 4*cap(t.fn) + cap(t.insnLen) +
		4*cap(t.lineStart) + 4*cap(t.lines) + 8*cap(t.cnt.Hits) + 4*cap(t.siteBlock)
	return float64(total) / float64(n)
}
