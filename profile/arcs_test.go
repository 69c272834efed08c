package profile

import (
	"bytes"
	"errors"
	"testing"
)

// arcsProfile is a valid profile with a call graph: main (called from
// outside) calls fib once at 0x1a, fib calls itself 176 times at 0x34,
// main calls puts in the C library once, and 2 of fib's entries are not
// accounted for (an indirect call, whose site ran twice).
func arcsProfile() *Profile {
	code := 0
	p := &Profile{
		Version: Version, Executable: "/x", Args: []string{"/x"}, Mode: ModeFuncs, Exit: Exit{Code: &code},
		Lines: []Line{},
		Functions: []Function{
			{Name: "main", Count: 1, Address: 0x10},
			{Name: "fib", Count: 179, Address: 0x30},
		},
		Sites: []Site{{Address: 0x10, Count: 1, Kind: KindFunc}, {Address: 0x30, Count: 179, Kind: KindFunc}},
		Arcs: []Arc{
			{Caller: "main", Site: 0x1a, File: "/x.c", Line: 9, Callee: "fib", CalleeAddress: 0x30, Count: 1, Kind: ArcDirect},
			{Caller: "main", Site: 0x1f, File: "/x.c", Line: 10, Count: 2, Kind: ArcIndirect},
			{Caller: "main", Site: 0x24, Callee: "puts", Outside: true, Count: 1, Kind: ArcPLT},
			{Caller: "fib", Site: 0x34, Callee: "fib", CalleeAddress: 0x30, Count: 176, Kind: ArcDirect},
		},
	}
	p.SetUnknownArcs()
	return p
}

func TestArcsUnknown(t *testing.T) {
	p := arcsProfile()
	got := map[string]uint64{}
	for _, a := range p.Arcs {
		if a.Kind == ArcUnknown {
			got[a.Callee] = a.Count
		}
	}
	if len(got) != 2 || got["main"] != 1 || got["fib"] != 2 {
		t.Errorf("unknown arcs = %v, want main 1 and fib 2", got)
	}
}

func TestArcsValidate(t *testing.T) {
	if err := arcsProfile().Validate(); err != nil {
		t.Fatalf("valid profile refused: %v", err)
	}
	for _, tc := range []struct {
		name, field string
		edit        func(p *Profile)
	}{
		{"kind", "arcs[0].kind", func(p *Profile) { p.Arcs[0].Kind = "jump" }},
		{"module", "arcs[0].module", func(p *Profile) { p.Arcs[0].Module = "/lib.so" }},
		{"callee module", "arcs[0].callee_module", func(p *Profile) { p.Arcs[0].CalleeModule = "/lib.so" }},
		{"no caller", "arcs[0]", func(p *Profile) { p.Arcs[0].Caller = "" }},
		{"no callee", "arcs[0]", func(p *Profile) { p.Arcs[0].Callee = "" }},
		{"indirect address", "arcs[1]", func(p *Profile) { p.Arcs[1].CalleeAddress = 0x30 }},
		{"unknown caller", "arcs[4]", func(p *Profile) { p.Arcs[4].Caller = "main" }},
		{"line without file", "arcs[0].line", func(p *Profile) { p.Arcs[0].File = "" }},
		{"outside with address", "arcs[2].outside", func(p *Profile) { p.Arcs[2].CalleeAddress = 0x99 }},
		{"twice", "arcs[4]", func(p *Profile) { p.Arcs = append(p.Arcs[:4], p.Arcs[0]) }},
	} {
		p := arcsProfile()
		tc.edit(p)
		err := p.Validate()
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: Validate = %v, want a FormatError on %s", tc.name, err, tc.field)
		}
	}
}

func TestArcsRoundTripAndMerge(t *testing.T) {
	var buf bytes.Buffer
	if err := arcsProfile().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Arcs) != 6 {
		t.Fatalf("decoded %d arcs, want 6", len(q.Arcs))
	}
	// A second run without arcs: its calls are unknown in the sum.
	r := arcsProfile()
	r.Arcs = nil
	m, err := Merge(false, q, arcsProfile(), r)
	if err != nil {
		t.Fatal(err)
	}
	want := map[arcKey]uint64{
		{site: 0x1a, kind: ArcDirect, callee: "fib", calleeAddr: 0x30}: 2,
		{site: 0x34, kind: ArcDirect, callee: "fib", calleeAddr: 0x30}: 352,
		{site: 0x1f, kind: ArcIndirect}:                                4,
		{site: 0x24, kind: ArcPLT, callee: "puts"}:                     2,
		{kind: ArcUnknown, callee: "main", calleeAddr: 0x10}:           3,
		{kind: ArcUnknown, callee: "fib", calleeAddr: 0x30}:            179 + 4,
	}
	if len(m.Arcs) != len(want) {
		t.Fatalf("merged arcs = %+v, want %d", m.Arcs, len(want))
	}
	for _, a := range m.Arcs {
		if w, ok := want[a.key()]; !ok || w != a.Count {
			t.Errorf("merged arc %+v: want count %d (listed: %v)", a, w, ok)
		}
	}
}
