package breakpoint

import (
	"slices"
	"testing"
)

// TestHitEntry counts a dispatch's entries from its index register's
// value, the low 32 bits of it for a 32-bit index, ignores a value past
// the table, and takes an entry back with its trap's Unhit.
func TestHitEntry(t *testing.T) {
	tab := NewTable([]SiteSpec{
		{Addr: 0x00, Kind: KindFunc, Func: 0, Entry: true},
		{Addr: 0x10, Kind: KindLine, Func: 0, Lines: []int32{0}},
	}, 1)
	const block = 7
	tab.entries = map[int]EntrySite{1: {Site: 1, N: 4, Reg: EntryReg{Reg: 0}, block: block}}
	tab.entryList = []EntrySite{tab.entries[1]}
	tab.cnt.Entries = map[int][]uint64{block: make([]uint64, 4)}
	var c Cursor
	for _, v := range []uint64{2, 0xdead_0000_0002, 3, 4, 1 << 40} {
		u := tab.Hit(&c, 1, 0x100)
		tab.HitEntry(1, v, &u)
	}
	if got, want := tab.Counts().Entries[block], []uint64{1, 0, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("Entries = %v, want %v", got, want)
	}
	u := tab.Hit(&c, 1, 0x100)
	tab.HitEntry(1, 1, &u)
	tab.Unhit(&c, u)
	if got, want := tab.Counts().Entries[block], []uint64{1, 0, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("after Hit, HitEntry and Unhit: Entries = %v, want %v", got, want)
	}
	if k, ok := tab.EntryIndex(1, 0xffff_ffff_0000_0003); !ok || k != 3 {
		t.Errorf("EntryIndex of a 32-bit index 3 = %d, %v", k, ok)
	}
	if _, ok := tab.EntryIndex(0, 1); ok {
		t.Error("EntryIndex of a site that is no dispatch: ok")
	}
	if n := tab.EntryCounters(); n != 4 {
		t.Errorf("EntryCounters = %d, want 4", n)
	}
}
