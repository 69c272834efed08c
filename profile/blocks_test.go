package profile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// blocksProfile is a valid profile with blocks: f at 0x10 has blocks 0x10
// (a loop head, entered once and 9 times from itself) and 0x20.
func blocksProfile() *Profile {
	code := 0
	return &Profile{
		Version: Version, Executable: "/x", Args: []string{"/x"}, Mode: ModeLinesFuncs, Exit: Exit{Code: &code},
		Lines:     []Line{{File: "/x.c", Line: 3, Count: 10}},
		Branches:  []Branch{{File: "/x.c", Line: 3, Address: 0x1e, Taken: 9, NotTaken: 1}},
		Functions: []Function{{Name: "f", Count: 1, Address: 0x10, Blocks: 2, BlocksExecuted: 2, Edges: 2}},
		Sites:     []Site{{Address: 0x10, Count: 10, Kind: "line,func,block"}, {Address: 0x20, Count: 1, Kind: KindBlock}},
		Blocks: []Block{
			{Address: 0x20, End: 0x21, Function: 0x10, Count: 1},
			{Address: 0x10, End: 0x20, Function: 0x10, Count: 10, Entries: 1},
		},
		Edges: []Edge{
			{From: 0x10, To: 0x20, Kind: EdgeFallthrough, Count: 1},
			{From: 0x10, To: 0x10, Kind: EdgeTaken, Count: 9},
		},
	}
}

func TestBlocksValidate(t *testing.T) {
	if err := blocksProfile().Validate(); err != nil {
		t.Fatalf("valid profile refused: %v", err)
	}
	for _, tc := range []struct {
		name, field string
		edit        func(p *Profile)
	}{
		{"site kind order", "sites[0].kind", func(p *Profile) { p.Sites[0].Kind = "block,line" }},
		{"site kind unknown", "sites[0].kind", func(p *Profile) { p.Sites[0].Kind = "line,edge" }},
		{"block end", "blocks[0].end", func(p *Profile) { p.Blocks[0].End = 0x20 }},
		{"block function", "blocks[1].function", func(p *Profile) { p.Blocks[1].Function = 0x11 }},
		{"block twice", "blocks[1]", func(p *Profile) { p.Blocks[1].Address = 0x20; p.Blocks[1].End = 0x21 }},
		{"entries", "blocks[1].entries", func(p *Profile) { p.Blocks[1].Entries = 11 }},
		{"block module", "blocks[0].module", func(p *Profile) { p.Blocks[0].Module = "/lib.so" }},
		{"edge from", "edges[0].from", func(p *Profile) { p.Edges[0].From = 0x11 }},
		{"edge to", "edges[0].to", func(p *Profile) { p.Edges[0].To = 0x30 }},
		{"edge kind", "edges[0].kind", func(p *Profile) { p.Edges[0].Kind = "call" }},
		{"edge twice", "edges[1]", func(p *Profile) { p.Edges[1].To = 0x20 }},
		{"branch line", "branches[0].line", func(p *Profile) { p.Branches[0].Line = 0 }},
		{"branch twice", "branches[1]", func(p *Profile) { p.Branches = append(p.Branches, p.Branches[0]) }},
	} {
		p := blocksProfile()
		tc.edit(p)
		err := p.Validate()
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: Validate = %v, want a FormatError on %s", tc.name, err, tc.field)
		}
	}
	p := blocksProfile()
	p.Edges[0].To, p.Edges[0].Exits = 0x400, true
	if err := p.Validate(); err != nil {
		t.Errorf("an edge that exits to another function: %v", err)
	}
}

// TestBlocksBadAddress checks that an address that does not parse is refused
// when decoded, with the field named as Validate names the others (the model
// cannot hold such an address).
func TestBlocksBadAddress(t *testing.T) {
	var buf bytes.Buffer
	if err := blocksProfile().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	for _, tc := range []struct{ name, old, new, field string }{
		{"block address", `"address": "0x20",
      "end"`, `"address": "20",
      "end"`, "blocks[1].address"},
		{"block end", `"end": "0x21"`, `"end": "0x"`, "blocks[1].end"},
		{"block function", `"function": "0x10",
      "count": 1
`, `"function": "0x-10",
      "count": 1
`, "blocks[1].function"},
		{"edge to", `"to": "0x20"`, `"to": "0x120000000000000000"`, "edges[1].to"},
		{"branch address", `"address": "0x1e"`, `"address": "x"`, "branches[0].address"},
	} {
		if !strings.Contains(doc, tc.old) {
			t.Fatalf("%s: %q not in\n%s", tc.name, tc.old, doc)
		}
		_, err := Decode(strings.NewReader(strings.Replace(doc, tc.old, tc.new, 1)))
		var fe *FormatError
		var ae *AddressError
		if !errors.As(err, &fe) || fe.Field != tc.field || !errors.As(err, &ae) {
			t.Errorf("%s: Decode = %v, want a FormatError on %s wrapping an AddressError", tc.name, err, tc.field)
		}
	}
}

func TestBlocksMerge(t *testing.T) {
	a, b := blocksProfile(), blocksProfile()
	b.Blocks[0].Count = 0 // 0x20 never ran in b
	b.Edges[0].Count = 0
	a.Blocks[0].Count, a.Functions[0].BlocksExecuted = 0, 1
	a.Edges[0].Count = 0
	b.Branches = append(b.Branches, Branch{File: "/x.c", Line: 3, Address: 0x12, Taken: 4})
	m, err := Merge(false, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("merged profile invalid: %v", err)
	}
	if m.Blocks[0].Address != 0x10 || m.Blocks[0].Count != 20 || m.Blocks[0].Entries != 2 || m.Blocks[1].Count != 0 {
		t.Errorf("blocks %+v", m.Blocks)
	}
	if m.Edges[0].To != 0x10 || m.Edges[0].Count != 18 {
		t.Errorf("edges %+v", m.Edges)
	}
	if f := m.Functions[0]; f.Blocks != 2 || f.BlocksExecuted != 1 || f.Edges != 2 {
		t.Errorf("function %+v: want 2 blocks, 1 executed, 2 edges", f)
	}
	br := m.Branches
	if len(br) != 2 || br[0] != (Branch{File: "/x.c", Line: 3, Address: 0x12, Taken: 4}) || br[1] != (Branch{File: "/x.c", Line: 3, Address: 0x1e, Taken: 18, NotTaken: 2}) {
		t.Errorf("branches %+v", br)
	}
	if m.Sites[0].Kind != "line,func,block" || UnionKind("line", "func,block") != "line,func,block" {
		t.Errorf("site kinds %q, %q", m.Sites[0].Kind, UnionKind("line", "func,block"))
	}
	if len(a.Branches) != 1 || a.Branches[0].Taken != 9 {
		t.Errorf("Merge modified its input: %+v", a.Branches)
	}
}

// TestAddressJSON checks the saved notation of every kind of address,
// zeros included: an exit at a NULL dereference keeps "0x0" for both its
// fault address and its PC, and a branch keeps its target.
func TestAddressJSON(t *testing.T) {
	p := blocksProfile()
	p.Exit = Exit{Signal: "SIGSEGV", FaultAddress: new(Address(0)), PC: new(Address(0))}
	p.Branches[0].Target = 0x10
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\"exit\": {\n    \"signal\": \"SIGSEGV\",\n    \"fault_address\": \"0x0\",\n    \"pc\": \"0x0\"\n  }",
		`"address": "0x1e",`, `"target": "0x10"`, `"end": "0x21",`, `"from": "0x10",`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("encoding lacks %q:\n%s", want, buf.String())
		}
	}
	q, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := q.Encode(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Errorf("Encode(Decode(x)) != x:\n%s", again.Bytes())
	}
	if !q.Branches[0].Backward() || *q.Exit.PC != 0 {
		t.Errorf("decoded %+v", q.Exit)
	}
}
