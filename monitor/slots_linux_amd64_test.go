//go:build linux && amd64

package monitor

import (
	"testing"

	"github.com/patchprof/patchprof/breakpoint/jump"
)

// built returns a trampoline of n bytes for site i of j, at its place.
func built(j *jumpArea, i, n int) *jump.Trampoline {
	return &jump.Trampoline{At: j.place(i), Code: make([]byte, n)}
}

// TestSlotsPacked: trampolines built one after another take the slots
// their lengths need, and every PC inside one finds its site and start.
func TestSlotsPacked(t *testing.T) {
	const base = 0x7f0000000000
	j := newJumpArea(base, jumpSize(4), 4)
	lens := []int{37, 5, 64, 200}
	var at []uint64
	for i, n := range lens {
		tr := built(j, i, n)
		if !j.fits(i, tr) {
			t.Fatalf("site %d (%d bytes) does not fit at %#x", i, n, tr.At)
		}
		j.take(i, tr)
		j.tramp[i] = tr
		at = append(at, tr.At)
	}
	want := []uint64{base + jumpHeader, base + jumpHeader + 64, base + jumpHeader + 96, base + jumpHeader + 160}
	for i := range want {
		if at[i] != want[i] {
			t.Errorf("site %d at %#x, want %#x", i, at[i], want[i])
		}
	}
	if j.next != 12 {
		t.Errorf("next free slot %d, want 12", j.next)
	}
	for i, n := range lens {
		for _, pc := range []uint64{at[i], at[i] + uint64(n) - 1} {
			s, start, ok := j.siteAt(pc)
			if !ok || s != i || start != at[i] {
				t.Errorf("siteAt(%#x) = %d, %#x, %v; want %d, %#x", pc, s, start, ok, i, at[i])
			}
			if k, tr := j.trampolineAt(pc); tr == nil || k != i {
				t.Errorf("trampolineAt(%#x) = %d, %v; want site %d", pc, k, tr, i)
			}
		}
	}
	// The padding after site 0's 37 bytes is its slot's, not code.
	if _, tr := j.trampolineAt(at[0] + 40); tr != nil {
		t.Errorf("trampolineAt in site 0's padding = %v, want none", tr)
	}
	if _, _, ok := j.siteAt(j.slotAddr(j.next)); ok {
		t.Errorf("siteAt past the last trampoline found a site")
	}
	if _, _, ok := j.siteAt(base + 8); ok {
		t.Errorf("siteAt in the header found a site")
	}
	c := j.clone()
	c.take(3, nil) // already placed: nothing changes
	if s, _, ok := c.siteAt(at[2]); !ok || s != 2 {
		t.Errorf("a clone lost site 2")
	}
}

// TestSlotsPlan: a layout made ahead gives each site its slots; a
// trampoline that comes out longer than laid out for it is built at the
// end, and its laid-out slots are freed.
func TestSlotsPlan(t *testing.T) {
	const base = 0x7f0000000000
	j := newJumpArea(base, jumpSize(3), 3)
	p := &slotPlan{first: []uint32{1, 0, 3}, slots: []uint8{2, 0, 1}, next: 3}
	if !p.apply(j) {
		t.Fatal("the plan did not apply to a fresh area")
	}
	if got := j.place(2); got != j.slotAddr(2) {
		t.Errorf("site 2 placed at %#x, want slot 2 (%#x)", got, j.slotAddr(2))
	}
	if got := j.place(1); got != j.slotAddr(3) {
		t.Errorf("site 1, not laid out, placed at %#x, want the end (%#x)", got, j.slotAddr(3))
	}
	tr := built(j, 0, 60)
	if !j.fits(0, tr) {
		t.Errorf("60 bytes do not fit site 0's two slots")
	}
	long := built(j, 2, 40)
	if j.fits(2, long) {
		t.Fatalf("40 bytes fit site 2's one slot")
	}
	j.unplace(2)
	if _, _, ok := j.siteAt(j.slotAddr(2)); ok {
		t.Errorf("site 2's laid-out slot is still owned")
	}
	long = built(j, 2, 40)
	if long.At != j.slotAddr(3) || !j.fits(2, long) {
		t.Fatalf("site 2 rebuilt at %#x, want the end (%#x)", long.At, j.slotAddr(3))
	}
	j.take(2, long)
	if j.next != 5 {
		t.Errorf("next free slot %d, want 5", j.next)
	}
	if p.apply(j) {
		t.Errorf("a plan applied to an area whose end has moved")
	}
}

// TestSlotsFull: a trampoline past the region's last slot does not fit.
func TestSlotsFull(t *testing.T) {
	j := newJumpArea(0x10000, jumpHeader+2*trampSlot, 2)
	tr := built(j, 0, 2*trampSlot)
	if !j.fits(0, tr) {
		t.Fatal("two slots' worth does not fit two free slots")
	}
	j.take(0, tr)
	if tr := built(j, 1, 1); j.fits(1, tr) {
		t.Errorf("a byte fits a full region")
	}
}

// TestSlotsChunks: a trampoline across two chunks of the owner table is
// found from either, and a fork's copy takes slots of its own without
// changing the parent's.
func TestSlotsChunks(t *testing.T) {
	n := len(ownerChunk{})
	j := newJumpArea(0x10000, jumpHeader+uint64(4*n)*trampSlot, 2)
	j.next = uint32(n - 1)
	tr := built(j, 0, 3*trampSlot)
	if !j.fits(0, tr) {
		t.Fatal("three slots do not fit")
	}
	j.take(0, tr)
	j.tramp[0] = tr
	for _, pc := range []uint64{tr.At, tr.At + 2*trampSlot} {
		if i, at, ok := j.siteAt(pc); !ok || i != 0 || at != tr.At {
			t.Errorf("siteAt(%#x) = %d, %#x, %v; want 0, %#x", pc, i, at, ok, tr.At)
		}
	}
	c := j.clone()
	tc := built(c, 1, 10)
	c.take(1, tc)
	if _, _, ok := j.siteAt(tc.At); ok {
		t.Errorf("the parent sees the copy's trampoline at %#x", tc.At)
	}
	if i, _, ok := c.siteAt(tc.At); !ok || i != 1 {
		t.Errorf("the copy lost its own trampoline")
	}
	if i, _, ok := c.siteAt(tr.At); !ok || i != 0 {
		t.Errorf("the copy lost the parent's trampoline")
	}
}
