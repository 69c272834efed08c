package profile

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestMerge(t *testing.T) {
	code := 0
	a := &Profile{Version: Version, Executable: "/x", BuildID: "ab", Mode: ModeLines, Exit: Exit{Code: &code},
		Lines: []Line{{File: "/x.c", Line: 3, Count: 10}, {File: "/x.c", Line: 4}},
		Sites: []Site{{Address: 0x10, Count: 10, Kind: KindLine}}}
	b := &Profile{Version: Version, Executable: "/x", BuildID: "ab", Mode: ModeFuncs, Exit: Exit{Signal: "SIGSEGV"},
		Lines:     []Line{{File: "/x.c", Line: 3, Count: 5}, {File: "/x.c", Line: 7, Count: 1}},
		Functions: []Function{{Name: "f", Count: 2, Address: 0x10}},
		Sites:     []Site{{Address: 0x10, Count: 2, Kind: KindFunc}}}
	m, err := Merge(false, a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]uint64{3: 15, 4: 0, 7: 1}
	if len(m.Lines) != 3 {
		t.Fatalf("lines %v", m.Lines)
	}
	for _, l := range m.Lines {
		if l.Count != want[l.Line] {
			t.Errorf("line %d: %d, want %d", l.Line, l.Count, want[l.Line])
		}
	}
	if m.Mode != ModeLinesFuncs || len(m.Functions) != 1 || m.Functions[0].Count != 2 {
		t.Errorf("mode %q functions %v", m.Mode, m.Functions)
	}
	if len(m.Sites) != 1 || m.Sites[0].Count != 12 || m.Sites[0].Kind != KindLineFunc {
		t.Errorf("sites %v", m.Sites)
	}
	if m.Exit.Signal != "SIGSEGV" {
		t.Errorf("exit %+v, want the last input's", m.Exit)
	}
	if err := m.Validate(); err != nil {
		t.Errorf("merged profile invalid: %v", err)
	}
	c := &Profile{Version: Version, Executable: "/y", BuildID: "cd", Mode: ModeLines}
	if _, err := Merge(false, a, c); !errors.Is(err, ErrMismatch) {
		t.Errorf("merging different build IDs: %v, want ErrMismatch", err)
	}
	if _, err := Merge(true, a, c); err != nil {
		t.Errorf("forced merge: %v", err)
	}
}

// TestMergeSaturates: sums that pass 2^64-1 stay at 2^64-1 instead of
// wrapping (2^64-1 + 32 used to give 31), and a note says how many did.
func TestMergeSaturates(t *testing.T) {
	const max = math.MaxUint64
	mk := func(n uint64) *Profile {
		p := blocksProfile()
		p.Lines[0].Count = n
		p.Sites[0].Count = n
		p.Functions[0].Count, p.Functions[0].Returns = n, n
		p.Blocks[1].Count, p.Blocks[1].Entries = n, n
		p.Edges[1].Count = n
		p.Branches[0].Taken = n
		p.Calls = []Call{{File: "/x.c", Line: 3, Address: 0x18, Count: n, Returned: n}}
		return p
	}
	m, err := Merge(false, mk(max), mk(32))
	if err != nil {
		t.Fatal(err)
	}
	got := []uint64{m.Lines[0].Count, m.Sites[0].Count, m.Functions[0].Count, m.Functions[0].Returns,
		m.Blocks[0].Count, m.Blocks[0].Entries, m.Edges[0].Count, m.Branches[0].Taken, m.Calls[0].Count, m.Calls[0].Returned}
	for i, c := range got {
		if c != max {
			t.Errorf("count %d of %v = %d, want 2^64-1", i, got, c)
		}
	}
	want := []string{"merged from 2 profiles", "10 merged counts passed 2^64-1 and were capped at 18446744073709551615: they are lower bounds"}
	if !slices.Equal(m.Notes, want) {
		t.Errorf("notes %q, want %q", m.Notes, want)
	}
	if err := m.Validate(); err != nil {
		t.Errorf("merged profile invalid: %v", err)
	}
	m, err = Merge(false, mk(max-32), mk(32))
	if err != nil {
		t.Fatal(err)
	}
	if m.Lines[0].Count != max || !slices.Equal(m.Notes, want[:1]) {
		t.Errorf("2^64-33 + 32 = %d with notes %q, want 2^64-1 and no cap", m.Lines[0].Count, m.Notes)
	}
}
