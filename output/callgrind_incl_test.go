package output

import (
	"reflect"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// TestArcInclusive: each sampled chain charges its time to every call it
// holds once: to the arc whose site holds the caller frame's address and
// whose callee the inner frame is in, or to the one callee outside the
// counted modules a site has (qsort calling back in); a recursive chain
// charges its arc once.
func TestArcInclusive(t *testing.T) {
	fr := func(fn string, a profile.Address) profile.Frame { return profile.Frame{Function: fn, Address: a} }
	p := &profile.Profile{
		Arcs: []profile.Arc{
			{Caller: "main", Site: 0x100, Callee: "f", Count: 1, Kind: profile.ArcDirect},
			{Caller: "f", Site: 0x200, Callee: "g", Count: 3, Kind: profile.ArcDirect},
			{Caller: "f", Site: 0x210, Callee: "f", Count: 2, Kind: profile.ArcDirect},
			{Caller: "f", Site: 0x300, Callee: "qsort", Outside: true, Count: 1, Kind: profile.ArcPLT},
		},
		Stacks: []profile.Stack{
			{Frames: []profile.Frame{fr("g", 0x10), fr("f", 0x204), fr("main", 0x104)}, Samples: 5, TimeNS: 50},
			{Frames: []profile.Frame{fr("cmp", 0x20), fr("f", 0x304), fr("main", 0x104)}, Samples: 3, TimeNS: 30},
			{Frames: []profile.Frame{fr("g", 0x10), fr("f", 0x204), fr("f", 0x214), fr("f", 0x214), fr("main", 0x104)}, Samples: 1, TimeNS: 10},
			// A frame at no arc's site charges nothing.
			{Frames: []profile.Frame{fr("g", 0x10), fr("h", 0x900)}, Samples: 1, TimeNS: 7},
		},
	}
	want := map[inclKey]uint64{
		{"", 0x100, "f"}:     90,
		{"", 0x200, "g"}:     60,
		{"", 0x210, "f"}:     10,
		{"", 0x300, "qsort"}: 30,
	}
	if got := arcInclusive(p); !reflect.DeepEqual(got, want) {
		t.Errorf("arcInclusive = %v\nwant %v", got, want)
	}
}
