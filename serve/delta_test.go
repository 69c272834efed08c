package serve

import (
	"reflect"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

func TestDelta(t *testing.T) {
	old := &profile.Profile{
		Functions: []profile.Function{{Name: "f", Address: 1, Count: 10, Returns: 4}, {Name: "g", Address: 2, Count: 3}},
		Lines:     []profile.Line{{File: "a.c", Line: 3, Count: 7}},
		Sites:     []profile.Site{{Address: 1, Count: 10}},
		Blocks:    []profile.Block{{Address: 1, Count: 5, Entries: 2}},
		Edges:     []profile.Edge{{From: 1, To: 2, Kind: profile.EdgeTaken, Count: 3}},
		Branches:  []profile.Branch{{Address: 5, Taken: 2, NotTaken: 1}},
		Calls:     []profile.Call{{Address: 6, Count: 2, Returned: 1}},
		Arcs: []profile.Arc{
			{Caller: "f", Site: 7, Callee: "g", CalleeAddress: 2, Count: 3, Kind: profile.ArcDirect},
			{Callee: "f", CalleeAddress: 1, Count: 10, Kind: profile.ArcUnknown},
		},
	}
	cur := &profile.Profile{
		Functions: []profile.Function{
			{Name: "f", Address: 1, Count: 15, Returns: 9},
			{Name: "g", Address: 2, Count: 1},                      // shrank: another run's
			{Name: "h", Address: 9, Count: 4, Module: "/lib/x.so"}, // loaded since
		},
		Lines:    []profile.Line{{File: "a.c", Line: 3, Count: 8}, {File: "a.c", Line: 4, Count: 2}},
		Sites:    []profile.Site{{Address: 1, Count: 15}, {Address: 1, Count: 6, Module: "/lib/x.so"}},
		Blocks:   []profile.Block{{Address: 1, Count: 6, Entries: 2}},
		Edges:    []profile.Edge{{From: 1, To: 2, Kind: profile.EdgeTaken, Count: 5}, {From: 1, To: 2, Kind: profile.EdgeFallthrough, Count: 1}},
		Branches: []profile.Branch{{Address: 5, Taken: 3, NotTaken: 1}},
		Calls:    []profile.Call{{Address: 6, Count: 4, Returned: 4}},
		Arcs: []profile.Arc{
			{Caller: "f", Site: 7, Callee: "g", CalleeAddress: 2, Count: 4, Kind: profile.ArcDirect},
			{Callee: "f", CalleeAddress: 1, Count: 15, Kind: profile.ArcUnknown},
			{Caller: "f", Site: 8, Callee: "h", CalleeAddress: 9, CalleeModule: "/lib/x.so", Count: 4, Kind: profile.ArcPLT},
		},
	}
	keep := cur.Clone()
	keepOld := old.Clone()
	want := &profile.Profile{
		Functions: []profile.Function{{Name: "f", Address: 1, Count: 5, Returns: 5}, {Name: "g", Address: 2, Count: 0},
			{Name: "h", Address: 9, Count: 4, Module: "/lib/x.so"}},
		Lines:    []profile.Line{{File: "a.c", Line: 3, Count: 1}, {File: "a.c", Line: 4, Count: 2}},
		Sites:    []profile.Site{{Address: 1, Count: 5}, {Address: 1, Count: 6, Module: "/lib/x.so"}},
		Blocks:   []profile.Block{{Address: 1, Count: 1, Entries: 0}},
		Edges:    []profile.Edge{{From: 1, To: 2, Kind: profile.EdgeTaken, Count: 2}, {From: 1, To: 2, Kind: profile.EdgeFallthrough, Count: 1}},
		Branches: []profile.Branch{{Address: 5, Taken: 1, NotTaken: 0}},
		Calls:    []profile.Call{{Address: 6, Count: 2, Returned: 3}},
		Arcs: []profile.Arc{
			{Caller: "f", Site: 7, Callee: "g", CalleeAddress: 2, Count: 1, Kind: profile.ArcDirect},
			{Callee: "f", CalleeAddress: 1, Count: 5, Kind: profile.ArcUnknown},
			{Caller: "f", Site: 8, Callee: "h", CalleeAddress: 9, CalleeModule: "/lib/x.so", Count: 4, Kind: profile.ArcPLT},
		},
	}
	if got := Delta(old, cur); !reflect.DeepEqual(got, want) {
		t.Errorf("Delta:\n%+v\nwant\n%+v", got, want)
	}
	if !reflect.DeepEqual(cur, keep) || !reflect.DeepEqual(old, keepOld) {
		t.Errorf("Delta changed its arguments")
	}
}
