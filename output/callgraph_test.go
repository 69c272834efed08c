package output

import (
	"bytes"
	"os"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/patchprof/patchprof/profile"
)

// callsSource is the synthetic source of callsProfile.
const callsSource = `static int sq(int x) { return x * x; }
int twice(int x) { return sq(x) + sq(x); }
int main(void)
{
	int s = twice(3);
	s += fp(s);
	puts("done");
	return s;
}
`

// callsReadFile serves callsSource as /src/calls.c.
func callsReadFile(name string) ([]byte, error) {
	if name == "/src/calls.c" {
		return []byte(callsSource), nil
	}
	return nil, os.ErrNotExist
}

// callsProfile is a --calls profile over callsSource: main calls twice
// once, twice calls sq from two sites, main calls through a pointer (to
// sq, 1 time: an unknown caller of sq) and puts in the C library; main's
// own caller is unknown.
func callsProfile() *profile.Profile {
	f := "/src/calls.c"
	p := &profile.Profile{
		Version: profile.Version, Executable: "/src/calls", Args: []string{"./calls"}, Mode: profile.ModeLinesFuncs,
		Exit: profile.Exit{Code: intp(0)},
		Lines: []profile.Line{
			{File: f, Line: 1, Count: 3, Function: "sq"}, {File: f, Line: 2, Count: 1, Function: "twice"},
			{File: f, Line: 3, Count: 1, Function: "main"}, {File: f, Line: 5, Count: 1, Function: "main"},
			{File: f, Line: 6, Count: 1, Function: "main"}, {File: f, Line: 7, Count: 1, Function: "main"},
			{File: f, Line: 8, Count: 1, Function: "main"},
		},
		Functions: []profile.Function{
			{Name: "sq", Count: 3, File: f, Line: 1, Address: 0x1000},
			{Name: "twice", Count: 1, File: f, Line: 2, Address: 0x1020},
			{Name: "main", Count: 1, File: f, Line: 3, Address: 0x1040},
		},
		Sites: []profile.Site{},
		Arcs: []profile.Arc{
			{Caller: "twice", Site: 0x1028, File: f, Line: 2, Callee: "sq", CalleeAddress: 0x1000, Count: 1, Kind: profile.ArcDirect},
			{Caller: "twice", Site: 0x1030, File: f, Line: 2, Callee: "sq", CalleeAddress: 0x1000, Count: 1, Kind: profile.ArcDirect},
			{Caller: "main", Site: 0x1048, File: f, Line: 5, Callee: "twice", CalleeAddress: 0x1020, Count: 1, Kind: profile.ArcDirect},
			{Caller: "main", Site: 0x1050, File: f, Line: 6, Count: 1, Kind: profile.ArcIndirect},
			{Caller: "main", Site: 0x1058, File: f, Line: 7, Callee: "puts", Outside: true, Count: 1, Kind: profile.ArcPLT},
		},
	}
	p.SetUnknownArcs()
	return p
}

func TestCallGraphListingGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, callsProfile(), Options{ReadFile: callsReadFile, Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "calls/listing.golden", buf.String())
}

func TestCallgrindGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCallgrind(&buf, callsProfile()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "calls/callgrind.golden", buf.String())
	p := callsProfile()
	p.Mode, p.Lines = profile.ModeFuncs, []profile.Line{}
	buf.Reset()
	if err := WriteCallgrind(&buf, p); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "calls/callgrind_funcs.golden", buf.String())
}

// TestPprofArcs checks the calls samples of a profile with arcs: one per
// arc with a callee, at the stack callee over caller, summing to each
// function's calls.
func TestPprofArcs(t *testing.T) {
	var buf bytes.Buffer
	if err := WritePprof(&buf, callsProfile()); err != nil {
		t.Fatal(err)
	}
	prof, err := pprof.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	type stack struct {
		callee, caller string
		line           int64
	}
	got := map[stack]int64{}
	calls := map[string]int64{}
	for _, s := range prof.Sample {
		if s.Value[0] == 0 {
			continue // a line sample
		}
		if len(s.Location) != 2 {
			t.Fatalf("calls sample %v: want two locations, callee and caller", s)
		}
		callee, caller := s.Location[0].Line[0], s.Location[1].Line[0]
		got[stack{callee.Function.Name, caller.Function.Name, caller.Line}] += s.Value[0]
		calls[callee.Function.Name] += s.Value[0]
	}
	want := map[stack]int64{
		{"sq", "twice", 2}: 2, {"sq", PprofUnknownCallers, 0}: 1, {"twice", "main", 5}: 1,
		{"main", PprofUnknownCallers, 0}: 1, {"puts", "main", 7}: 1,
	}
	if len(got) != len(want) {
		t.Errorf("calls samples %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("calls of %s from %s on line %d: %d, want %d", k.callee, k.caller, k.line, got[k], n)
		}
	}
	if calls["sq"] != 3 || calls["twice"] != 1 || calls["main"] != 1 {
		t.Errorf("calls per function %v, want each function's count", calls)
	}
}
