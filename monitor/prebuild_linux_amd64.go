//go:build linux && amd64

package monitor

import (
	"bytes"
	"runtime"
	"slices"
	"sync"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/jump"
)

// Trampolines built ahead, side by side.
//
// An eager attach (eager_linux_amd64.go) patches every site of a module
// while the process is stopped, and building the trampolines, each site's
// instructions decoded and relocated, is most of that stop. A trampoline
// depends only on the site, its original bytes, where it goes in the
// region and its counters' offsets: all known once the module's region is
// mapped. So before the sites are patched one by one, the trampolines of
// the sites that take a jump (a short site's too: its landing is its
// host's address and a planned offset) are built on every CPU at
// once, and buildJump takes one only when what it would build it from is
// the same, byte for byte; otherwise it builds its own as before.

// A prebuiltJump is a trampoline built ahead from code and edges, or the
// error building it met.
type prebuiltJump struct {
	code    []byte
	edges   []jump.EdgeCount
	at      uint64 // where in the region
	counter uint32 // the site's counter's offset in a slab
	tr      *jump.Trampoline
	err     error
}

// counterOf returns the offset in a thread's slab of site i's counter.
func (j *jumpArea) counterOf(i int) uint32 { return uint32(j.ctrOff + 8*uint64(i)) }

// arcCounters returns the arcs site i's trampoline counts (Table.ArcsOf)
// with their counters' offsets in a thread's slab.
//
// Preconditions: mp.jmp has its counters (jumpRoom).
func (mp *mapping) arcCounters(i int) ([]int, []jump.EdgeCount) {
	arcs, ecs := mp.tab.ArcsOf(i)
	for n, k := range arcs {
		ecs[n].Counter = uint32(mp.jmp.ctrOff + 8*uint64(mp.tab.Len()+k))
	}
	return arcs, ecs
}

// prebuilt returns, and forgets, the trampoline built ahead for site i
// from code and edges at its place in mp's region (or the error that
// met), both nil when none was.
func (mp *mapping) prebuilt(i int, code []byte, edges []jump.EdgeCount) (*jump.Trampoline, error) {
	if i >= len(mp.pre) || mp.pre[i] == nil {
		return nil, nil
	}
	p := mp.pre[i]
	mp.pre[i] = nil
	if !p.same(code, edges, mp.jmp.place(i), mp.jmp.counterOf(i)) {
		return nil, nil
	}
	return p.tr, p.err
}

// same reports whether p was built from these inputs.
func (p *prebuiltJump) same(code []byte, edges []jump.EdgeCount, at uint64, counter uint32) bool {
	return p.at == at && p.counter == counter && bytes.Equal(p.code, code) && slices.Equal(p.edges, edges)
}

// buildAll builds the trampolines of tab's sites in pre (indexed like
// jobs) on every CPU, each from its own copy of its edges, and returns
// pre.
func buildAll(tab *breakpoint.Table, jobs []int, pre []prebuiltJump) []prebuiltJump {
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w; n < len(jobs); n += workers {
				k, p := jobs[n], &pre[n]
				p.tr, p.err = tab.BuildTrampoline(k, p.code, p.at, p.counter, slices.Clone(p.edges))
			}
		}()
	}
	wg.Wait()
	return pre
}

// stage puts j's region in mem's stage as far as its trampolines are
// laid out (planAhead): its header read, and the rest known to be zero
// while no site has been tried (nothing was written there since jumpRoom
// mapped it), else read. A page past them is read when first written.
func (j *jumpArea) stage(mem *procMem) {
	head := (j.base + jumpHeader + pageSize - 1) &^ (pageSize - 1)
	mem.prefetch(j.base, head)
	end := (j.slotAddr(j.next) + pageSize - 1) &^ (pageSize - 1)
	for _, st := range j.state {
		if st != jumpUntried {
			mem.prefetch(head, end)
			return
		}
	}
	mem.zero(head, end)
}

// prebuild puts in mp.pre, until buildJump takes them or jumpAll ends,
// the trampolines of mp's sites that jumpAll will patch on their own:
// those buildAhead made before the stop when its prediction of mp's
// region held, else built now on every CPU.
//
// Preconditions: on the tracer thread; every thread of mm is stopped; mp
// has its region and counters (jumpRoom).
func (m *mon) prebuild(mm *space, mp *mapping) {
	tab, j := mp.tab, mp.jmp
	ahead := m.ahead
	m.ahead = nil
	if ahead != nil && ahead.lo == mp.Lo && ahead.base == j.base && mp.Image == m.rootImg && ahead.plan.apply(j) {
		// Built before the attach stopped the process (buildAhead);
		// buildJump checks each against the code it reads.
		mp.pre = ahead.pre
		return
	}
	var jobs []int
	var pre []prebuiltJump
	var code [jump.MaxHostLen + 40]byte
	for k := 0; k < tab.Len(); k++ {
		if !aheadWanted(tab, k) || !m.jumpWanted(mp, k) || j.first[k] != 0 {
			continue
		}
		n := mp.originalCode(mm, tab.RuntimeAddr(k), code[:])
		if n < jump.JmpLen {
			continue
		}
		_, ecs := mp.arcCounters(k)
		jobs = append(jobs, k)
		pre = append(pre, prebuiltJump{code: bytes.Clone(code[:n]), edges: ecs, counter: j.counterOf(k)})
	}
	plan := planAhead(tab, j, jobs, pre)
	if !plan.apply(j) {
		return
	}
	mp.pre = collect(tab.Len(), jobs, pre)
}

// A slotPlan is where an eager attach's trampolines go in a region,
// laid out in site order from the slot start on.
type slotPlan struct {
	start, next uint32
	first       []uint32 // per site: 1 + its first slot, or 0
	slots       []uint8  // per site: how many
}

// planAhead builds the trampolines of tab's sites jobs in pre (indexed
// like jobs) on every CPU, for j's region from its free end on: once at
// a place of their own to learn their lengths, then again where those
// pack them. A site whose second build came out longer has no
// trampoline built ahead (buildJump builds it at the end).
func planAhead(tab *breakpoint.Table, j *jumpArea, jobs []int, pre []prebuiltJump) *slotPlan {
	for n, k := range jobs {
		pre[n].at = j.base + jumpHeader + uint64(k)*jump.TrampolineSize
	}
	buildAll(tab, jobs, pre)
	plan := &slotPlan{start: j.next, next: j.next, first: make([]uint32, tab.Len()), slots: make([]uint8, tab.Len())}
	var again, from []int
	var rebuilt []prebuiltJump
	for n, k := range jobs {
		p := &pre[n]
		if p.err != nil || p.tr == nil {
			continue
		}
		need := slotsFor(len(p.tr.Code))
		if uint64(plan.next)+uint64(need) > uint64(j.slots) {
			p.tr = nil
			continue
		}
		plan.first[k], plan.slots[k] = plan.next+1, uint8(need)
		p.at = j.slotAddr(plan.next)
		plan.next += need
		again, from = append(again, k), append(from, n)
		rebuilt = append(rebuilt, prebuiltJump{code: p.code, edges: p.edges, at: p.at, counter: p.counter})
	}
	buildAll(tab, again, rebuilt)
	for n, k := range again {
		p, q := &pre[from[n]], &rebuilt[n]
		p.tr, p.err = q.tr, q.err
		if q.err == nil && slotsFor(len(q.tr.Code)) > uint32(plan.slots[k]) {
			p.tr = nil
		}
	}
	return plan
}

// apply gives j's sites the slots p lays out, when j's free end is still
// where p began; it reports whether it did.
func (p *slotPlan) apply(j *jumpArea) bool {
	if p == nil || j.next != p.start || len(p.first) != len(j.first) {
		return false
	}
	for k, f := range p.first {
		if f != 0 && j.first[k] == 0 {
			j.own(k, f-1, uint32(p.slots[k]))
		}
	}
	j.next = p.next
	return true
}

// collect indexes pre, built for the sites jobs, by site: n sites.
func collect(n int, jobs []int, pre []prebuiltJump) []*prebuiltJump {
	out := make([]*prebuiltJump, n)
	for i, k := range jobs {
		out[k] = &pre[i]
	}
	return out
}

// aheadWanted reports whether site k of tab takes a jump patch whose
// trampoline can be built ahead: not a gate (Notify, Resume). A short
// site's is built like any other; its patch, a jmp rel8 to the landing in
// its host's bytes, is made when it is patched (buildJump's SetShort).
func aheadWanted(tab *breakpoint.Table, k int) bool {
	return tab.JumpLen(k) != 0 && !tab.Derived(k) && !tab.IsNotify(k) && !tab.IsResume(k)
}

// aheadJumps are the root image's trampolines built before an attach
// stopped the process, for the region base its first mapping would get.
type aheadJumps struct {
	lo, base uint64
	pre      []*prebuiltJump
	plan     *slotPlan
}

// buildAhead builds the executable's trampolines while pid still runs,
// for an eager attach (jumpAll): from its code as mapped, at the region
// mapScratch will map for it if the process maps nothing meanwhile, with
// the counters of the first mapping of the counter memory. jumpAll takes
// each one whose inputs turn out the same (prebuilt).
//
// Preconditions: on the tracer thread, before the attach.
func (m *mon) buildAhead(pid int, regions []region, used [][2]uint64, exe string) {
	tab := m.o.Table
	if !m.jumpOn || tab == nil || tab.Len() == 0 {
		return
	}
	k := slices.IndexFunc(regions, func(r region) bool { return r.path == exe })
	if k < 0 {
		return
	}
	lo := regions[k].lo
	hi, _ := runOf(regions, k)
	bias, err := loadBias(pid, m.o.Entry)
	if err != nil {
		return
	}
	base, ok := freeNear(lo, hi, jumpSize(tab.Len())+xolSize(tab.Len()), used)
	if !ok {
		return
	}
	mem, err := openMem(pid)
	if err != nil {
		return
	}
	defer mem.Close()
	text := make([]byte, hi-lo)
	if n, err := mem.ReadMemory(lo, text); err != nil || n != len(text) {
		return
	}
	// The mapping scanMaps will make, with the region mapScratch will map
	// and the counters of the first mapping (at the slab's first word
	// after the call words, jump.CallWords).
	j := newJumpArea(base, jumpSize(tab.Len()), tab.Len())
	j.ctrOff = jump.CallWords
	mp := &mapping{Mapped: Mapped{Bias: bias, Lo: lo, Hi: hi}, tab: tab.At(bias), jmp: j}
	var jobs []int
	var pre []prebuiltJump
	for k := 0; k < mp.tab.Len(); k++ {
		a := mp.tab.RuntimeAddr(k)
		if !aheadWanted(mp.tab, k) || a < lo || a+jump.JmpLen > hi {
			continue
		}
		_, ecs := mp.arcCounters(k)
		jobs = append(jobs, k)
		pre = append(pre, prebuiltJump{code: text[a-lo : min(a-lo+jump.MaxHostLen+40, hi-lo)], edges: ecs, counter: j.counterOf(k)})
	}
	plan := planAhead(mp.tab, j, jobs, pre)
	m.ahead = &aheadJumps{lo: lo, base: base, pre: collect(mp.tab.Len(), jobs, pre), plan: plan}
}
