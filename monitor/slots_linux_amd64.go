//go:build linux && amd64

package monitor

import (
	"maps"
	"slices"
	"sync/atomic"

	"github.com/patchprof/patchprof/breakpoint/jump"
)

// The trampolines' region, packed.
//
// A site's trampoline is built where its region has room (place) and
// takes the slots its code needs (take): a first hit's trampolines go one
// after another at the region's free end, and an eager attach lays out
// every site's ahead, in site order, from a first build's lengths
// (planAhead, prebuild_linux_amd64.go). Each slot knows its site (owner),
// so that a PC in the region finds its trampoline in constant time.

// An ownerChunk is the owners of 1,024 slots (32 KiB of region): the
// table is made a chunk at a time, as far as the trampolines go, so that
// it and a fork's copy of it follow what runs, not the region's room.
type ownerChunk [1024]uint32

// ownerAt returns the owner of slot s (0: free).
func (j *jumpArea) ownerAt(s uint32) uint32 {
	c := j.owner[s/uint32(len(ownerChunk{}))].Load()
	if c == nil {
		return 0
	}
	return atomic.LoadUint32(&c[s%uint32(len(ownerChunk{}))])
}

// setOwner makes o the owner of slot s.
func (j *jumpArea) setOwner(s, o uint32) {
	p := &j.owner[s/uint32(len(ownerChunk{}))]
	c := p.Load()
	if c == nil {
		if o == 0 {
			return
		}
		c = new(ownerChunk)
		p.Store(c)
	}
	atomic.StoreUint32(&c[s%uint32(len(ownerChunk{}))], o)
}

// trampSlot is the unit the trampolines are packed in: they average 37
// bytes on SQLite (jump.TrampolineSize only bounds one), and each page
// of the region an attach or a first hit writes is one the kernel must
// allocate, zero and copy, in the target and in the stage.
const trampSlot = 32

// jumpSize is the size of the trampoline region of a mapping with n sites:
// room for n trampolines of the largest size.
func jumpSize(n int) uint64 {
	return (jumpHeader + uint64(n)*jump.TrampolineSize + pageSize - 1) &^ (pageSize - 1)
}

// newJumpArea returns the area of n sites' trampolines at base.
func newJumpArea(base, size uint64, n int) *jumpArea {
	slots := uint32((size - jumpHeader) / trampSlot)
	return &jumpArea{base: base, size: size, state: make([]uint8, n), tramp: make([]*jump.Trampoline, n),
		owner: make([]atomic.Pointer[ownerChunk], (slots+uint32(len(ownerChunk{}))-1)/uint32(len(ownerChunk{}))), slots: slots, first: make([]uint32, n)}
}

// slotAddr returns where slot s of the region begins.
func (j *jumpArea) slotAddr(s uint32) uint64 { return j.base + jumpHeader + uint64(s)*trampSlot }

// slotsFor returns how many slots n bytes of trampoline take.
func slotsFor(n int) uint32 { return uint32((n + trampSlot - 1) / trampSlot) }

// place returns where site i's trampoline is to be built: at the slots
// laid out for it ahead (planAhead) or taken by an earlier build, else
// at the first free slot of the end.
func (j *jumpArea) place(i int) uint64 {
	if f := j.first[i]; f != 0 {
		return j.slotAddr(f - 1)
	}
	return j.slotAddr(j.next)
}

// fits reports whether tr, built for site i at place(i), fits there.
func (j *jumpArea) fits(i int, tr *jump.Trampoline) bool {
	need := slotsFor(len(tr.Code))
	if f := j.first[i]; f != 0 {
		s := f - 1
		return tr.At == j.slotAddr(s) && j.ownedFrom(s) >= need
	}
	return tr.At == j.slotAddr(j.next) && uint64(j.next)+uint64(need) <= uint64(j.slots)
}

// ownedFrom returns how many slots from s on belong to s's site.
func (j *jumpArea) ownedFrom(s uint32) uint32 {
	o, n := j.ownerAt(s), uint32(0)
	for s+n < j.slots && o != 0 && j.ownerAt(s+n) == o {
		n++
	}
	return n
}

// unplace frees the slots laid out for site i, whose trampoline did not
// fit them: it is built again at the end.
func (j *jumpArea) unplace(i int) {
	if f := j.first[i]; f != 0 {
		for s, n := f-1, j.ownedFrom(f-1); n > 0; s, n = s+1, n-1 {
			j.setOwner(s, 0)
		}
		j.first[i] = 0
	}
}

// take gives site i the slots tr, built at place(i) and fitting there,
// covers.
func (j *jumpArea) take(i int, tr *jump.Trampoline) {
	if j.first[i] != 0 {
		return
	}
	s, n := j.next, slotsFor(len(tr.Code))
	j.own(i, s, n)
	j.next = s + n
}

// own marks slots [s, s+n) as site i's.
func (j *jumpArea) own(i int, s, n uint32) {
	j.first[i] = s + 1
	for k := s; k < s+n; k++ {
		j.setOwner(k, uint32(i)+1)
	}
}

// siteAt returns the site whose slots hold pc and where its slots begin;
// false outside them. It is safe beside the tracer thread's writes.
func (j *jumpArea) siteAt(pc uint64) (int, uint64, bool) {
	if pc < j.base+jumpHeader || pc >= j.base+j.size {
		return 0, 0, false
	}
	s := uint32((pc - j.base - jumpHeader) / trampSlot)
	if s >= j.slots {
		return 0, 0, false
	}
	o := j.ownerAt(s)
	if o == 0 {
		return 0, 0, false
	}
	for s > 0 && j.ownerAt(s-1) == o {
		s--
	}
	return int(o - 1), j.slotAddr(s), true
}

// trampolineAt returns the site and trampoline whose code holds pc.
func (j *jumpArea) trampolineAt(pc uint64) (int, *jump.Trampoline) {
	i, _, ok := j.siteAt(pc)
	if !ok || i >= len(j.tramp) || j.tramp[i] == nil || !j.tramp[i].Contains(pc) {
		return 0, nil
	}
	return i, j.tramp[i]
}

// clone copies the area for a forked child.
func (j *jumpArea) clone() *jumpArea {
	c := *j
	c.state = slices.Clone(j.state)
	c.tramp = slices.Clone(j.tramp)
	c.seen = slices.Clone(j.seen)
	c.landings = maps.Clone(j.landings)
	c.owner = make([]atomic.Pointer[ownerChunk], len(j.owner))
	for k := range j.owner {
		if p := j.owner[k].Load(); p != nil {
			cp := *p
			c.owner[k].Store(&cp)
		}
	}
	c.first = slices.Clone(j.first)
	return &c
}
