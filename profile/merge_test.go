package profile

import (
	"errors"
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
