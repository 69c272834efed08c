package breakpoint

import (
	"maps"
	"slices"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// Jump-table entries (--lines): the line model asks for the entry each
// dispatch of some switches jumps through (linemodel.Model.Dispatches:
// empty cases that share a target with other values). The table's index
// is, where the dispatch's block starts, in the register its one
// predecessor compares with the table's last index (`cmp $N-1, %eax; ja
// default`, GCC -O0's bound check). Under the trap engines every block
// start traps, and the trap reads it (CountEntries); under the in-process
// engine the block's trampoline adds to the entry's counter
// (jump.EntryCount, jumpEntries), and a trap of the site, kept or before
// its patch, reads it as the trap engines do.

// An EntryReg is where a dispatch's table index is at its block's start:
// a general register (x86 numbering, 0 for %rax to 15 for %r15), of
// which the low 32 bits when Wide is false.
type EntryReg struct {
	Reg  uint8
	Wide bool
}

// An EntrySite is one dispatch whose table entries a table counts: its
// site, where its index is, its table's size, and, under the in-process
// engine, where its entries' counters start after the sites', the arcs'
// and the call slots' (Base, in counters).
type EntrySite struct {
	Site, N, Base int
	Reg           EntryReg
	block         int32 // table-wide block index
}

// CountEntries makes t count, at each dispatch the line model asks for
// whose index register the code says, the entry it jumps through
// (Counts.Entries). Call it only when every block start of t traps (the
// classic and xol engines), before the first Hit.
func (p *Plan) CountEntries(sym *symtab.File) {
	p.Wait()
	ds := p.model.Dispatches()
	if len(ds) == 0 {
		return
	}
	want := make(map[int32]bool, len(ds))
	for _, d := range ds {
		want[int32(d)] = true
	}
	p.setEntries(sym, func(tb int32, _ *cfg.Graph, _ int) bool { return want[tb] })
}

// jumpEntries makes t count the entries of every dispatch whose table
// sends several entries to one target, whose index register the code
// says: under the in-process engine, planned before the line model says
// which it needs (they are planned together), so that their blocks are
// never derived and their trampolines count the entries.
func (p *Plan) jumpEntries(sym *symtab.File) {
	p.setEntries(sym, func(_ int32, g *cfg.Graph, b int) bool {
		for _, t := range g.Tables {
			if t.Jump == g.Blocks[b].Last && !t.Computed {
				seen := make(map[uint64]bool, len(t.Targets))
				for _, to := range t.Targets {
					if seen[to] {
						return true
					}
					seen[to] = true
				}
			}
		}
		return false
	})
}

// setEntries makes t count the entries of the dispatches want picks
// (by table-wide block index, graph and block) whose index register the
// code says.
func (p *Plan) setEntries(sym *symtab.File, want func(tb int32, g *cfg.Graph, b int) bool) {
	t := p.Table
	sites := map[int]EntrySite{}
	for _, fg := range p.Graphs {
		g := fg.Graph
		for b, bl := range g.Blocks {
			tb := fg.FirstBlock + int32(b)
			if bl.Term != cfg.TermTable || !want(tb, g, b) {
				continue
			}
			reg, n, ok := dispatchIndex(sym, g, b)
			if !ok {
				continue
			}
			if i, ok := t.Index(bl.Start); ok && t.Kind(i)&KindBlock != 0 {
				sites[i] = EntrySite{Site: i, N: n, Reg: reg, block: tb}
			}
		}
	}
	t.entries, t.entryList, t.cnt.Entries = nil, nil, nil
	if len(sites) == 0 {
		return
	}
	t.entries = sites
	t.cnt.Entries = make(map[int][]uint64, len(sites))
	base := 0
	for _, i := range slices.Sorted(maps.Keys(sites)) {
		s := sites[i]
		s.Base = base
		base += s.N
		sites[i] = s
		t.entryList = append(t.entryList, s)
		t.cnt.Entries[int(s.block)] = make([]uint64, s.N)
	}
}

// dispatchIndex returns the register holding the table index where block
// b of g, a jump table's dispatch, starts, and the table's size: b's one
// predecessor ends with `cmp $N-1, REG` and a conditional jump that goes
// to b only when REG <= N-1 unsigned (ja past it, or jbe to it).
func dispatchIndex(sym *symtab.File, g *cfg.Graph, b int) (EntryReg, int, bool) {
	bl := g.Blocks[b]
	n := 0
	for _, t := range g.Tables {
		if t.Jump == bl.Last && !t.Computed {
			n = len(t.Targets)
		}
	}
	pred := -1
	var kind cfg.EdgeKind
	for _, e := range g.Edges {
		if e.To != b {
			continue
		}
		if pred >= 0 {
			return EntryReg{}, 0, false
		}
		pred, kind = e.From, e.Kind
	}
	if n == 0 || pred < 0 || g.Blocks[pred].Term != cfg.TermCond {
		return EntryReg{}, 0, false
	}
	p := g.Blocks[pred]
	var prev, last x86asm.Inst
	for pc := p.Start; pc < p.End; {
		code, ok := sym.Code(pc, int(p.End-pc))
		if !ok {
			return EntryReg{}, 0, false
		}
		inst, err := symtab.DecodeInst(code)
		if err != nil || inst.Len == 0 {
			return EntryReg{}, 0, false
		}
		prev, last = last, inst
		pc += uint64(inst.Len)
	}
	switch {
	case kind == cfg.Fallthrough && last.Op == x86asm.JA, kind == cfg.Taken && last.Op == x86asm.JBE:
	default:
		return EntryReg{}, 0, false
	}
	reg, isReg := prev.Args[0].(x86asm.Reg)
	imm, isImm := prev.Args[1].(x86asm.Imm)
	if prev.Op != x86asm.CMP || !isReg || !isImm || int64(imm) != int64(n-1) {
		return EntryReg{}, 0, false
	}
	switch {
	case reg >= x86asm.EAX && reg <= x86asm.R15L:
		return EntryReg{Reg: uint8(reg - x86asm.EAX)}, n, true
	case reg >= x86asm.RAX && reg <= x86asm.R15:
		return EntryReg{Reg: uint8(reg - x86asm.RAX), Wide: true}, n, true
	}
	return EntryReg{}, 0, false
}

// EntrySites returns the dispatches whose entries t counts, by site.
func (t *Table) EntrySites() []EntrySite { return t.entryList }

// EntryCounters returns how many entry counters the in-process engine
// keeps for t (after the sites', the arcs' and the call slots' in a
// slab).
func (t *Table) EntryCounters() int {
	if n := len(t.entryList); n > 0 {
		last := t.entryList[n-1]
		return last.Base + last.N
	}
	return 0
}

// AddEntryHits adds n to entry k's count of the dispatch at site i: the
// tracer folding what the target counted in-process.
func (t *Table) AddEntryHits(i, k int, n uint64) {
	if s, ok := t.entries[i]; ok && k < s.N {
		t.cnt.Entries[int(s.block)][k] += n
	}
}

// EntryRegOf returns where site i's table index is when site i is a
// dispatch whose entries t counts (CountEntries).
func (t *Table) EntryRegOf(i int) (EntryReg, bool) {
	s, ok := t.entries[i]
	return s.Reg, ok
}

// HitEntry counts, at the trap at site i (a dispatch: EntryRegOf) whose
// index register held v, the entry the dispatch jumps through, and notes
// it in u, the Undo of the same trap's Hit, for Unhit.
func (t *Table) HitEntry(i int, v uint64, u *Undo) {
	k, ok := t.EntryIndex(i, v)
	if !ok {
		return // the bound check holds: not reached
	}
	t.cnt.Entries[int(t.entries[i].block)][k]++
	u.entry = int32(k) + 1
}

// EntryIndex returns the entry of the dispatch at site i that index
// register value v picks; false when it is out of the table.
func (t *Table) EntryIndex(i int, v uint64) (int, bool) {
	s, ok := t.entries[i]
	if !s.Reg.Wide {
		v = uint64(uint32(v))
	}
	if !ok || v >= uint64(s.N) {
		return 0, false
	}
	return int(v), true
}

// entryCount returns the EntryCount of site i's trampoline, given the
// offset of its site counter in a thread's slab (the entries' counters
// follow the sites', the arcs' and the call slots'), or nil when it
// counts no entry.
func (t *Table) entryCount(i int, counter uint32) *jump.EntryCount {
	s, ok := t.entries[i]
	if !ok {
		return nil
	}
	off := uint64(counter) - 8*uint64(i) + 8*uint64(t.Len()+t.ArcCounters()+t.CallWords()+s.Base)
	if off > 1<<31-8*uint64(s.N) {
		return nil
	}
	return &jump.EntryCount{Counter: uint32(off), Reg: s.Reg.Reg, Wide: s.Reg.Wide}
}

// unhitEntry reverses HitEntry.
func (t *Table) unhitEntry(u Undo) {
	if u.entry == 0 {
		return
	}
	s := t.entries[int(u.site)]
	t.cnt.Entries[int(s.block)][u.entry-1]--
}

// cloneEntries returns a copy of Counts.Entries e that shares no memory
// with it.
func cloneEntries(e map[int][]uint64) map[int][]uint64 {
	if e == nil {
		return nil
	}
	out := make(map[int][]uint64, len(e))
	for k, v := range e {
		out[k] = slices.Clone(v)
	}
	return out
}
