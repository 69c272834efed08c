package watch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchprof/patchprof/profile"
)

func TestParseStat(t *testing.T) {
	// A command name with a space and a parenthesis, as proc(5) allows.
	line := "4242 (a b) c)) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100"
	start, ppid, err := parseStat(line)
	if err != nil || start != 987654 || ppid != 17 {
		t.Errorf("parseStat = %d, %d, %v; want 987654, 17, nil", start, ppid, err)
	}
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1 2", "4242 (x) S z 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 9 1 1"} {
		if _, _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		}
	}
}

func TestTracerPID(t *testing.T) {
	if got := tracerPID("Name:\tx\nTracerPid:\t812\nUid:\t1\n"); got != 812 {
		t.Errorf("tracerPID = %d, want 812", got)
	}
	if got := tracerPID("Name:\tx\n"); got != 0 {
		t.Errorf("tracerPID without the line = %d, want 0", got)
	}
}

func TestPIDFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := PIDFile{Path: filepath.Join(dir, "none.pid")}
	if ps, err := missing.Select(); err != nil || len(ps) != 0 {
		t.Errorf("missing pid file: %v, %v; want nothing, no error", ps, err)
	}
	bad := filepath.Join(dir, "bad.pid")
	os.WriteFile(bad, []byte("nginx\n"), 0o644)
	if _, err := (PIDFile{Path: bad}).Select(); err == nil || !strings.Contains(err.Error(), "not a process ID") {
		t.Errorf("pid file holding a word: %v", err)
	}
}

// funcProfile is a profile of build id with one function called n times.
func funcProfile(id string, n uint64, exit profile.Exit) *profile.Profile {
	return &profile.Profile{
		Version: profile.Version, Executable: "/srv/api", BuildID: id, Mode: profile.ModeFuncs, Exit: exit,
		Lines: []profile.Line{}, Sites: []profile.Site{},
		Functions: []profile.Function{{Name: "handle", Address: 0x1000, Count: n}},
	}
}

// TestAggregate sums the processes of each build apart, says when each
// was attached and how it ended, and is running while any is watched.
func TestAggregate(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
	code := 0
	recs := []*Record{
		{Proc: Proc{PID: 10}, Attached: t0, Ended: t0.Add(time.Second), Profile: funcProfile("aa", 3, profile.Exit{Code: &code})},
		{Proc: Proc{PID: 11}, Attached: t0, Profile: funcProfile("aa", 4, profile.Exit{Running: true})},
		{Proc: Proc{PID: 12}, Attached: t0, Ended: t0.Add(2 * time.Second), Profile: funcProfile("bb", 5, profile.Exit{Detached: true})},
		{Proc: Proc{PID: 13}, Refused: "already traced"},
	}
	builds, err := Aggregate(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(builds) != 2 || builds[0].Key != "aa" || builds[1].Key != "bb" {
		t.Fatalf("builds %+v, want aa then bb", builds)
	}
	a, b := builds[0].Profile, builds[1].Profile
	if a.Functions[0].Count != 7 || b.Functions[0].Count != 5 {
		t.Errorf("handle counted %d and %d, want 7 and 5", a.Functions[0].Count, b.Functions[0].Count)
	}
	if !a.Exit.Running || b.Exit.Running || !b.Exit.Detached {
		t.Errorf("exits %+v and %+v: want running (PID 11 is watched), then detached", a.Exit, b.Exit)
	}
	notes := strings.Join(a.Notes, "\n")
	for _, want := range []string{
		"PID 10: counted from its attach at 2026-11-27T18:00:00.000Z to its exit 0 at 2026-11-27T18:00:01.000Z",
		"PID 11: counted from its attach at 2026-11-27T18:00:00.000Z, still watched",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if want := "PID 12: counted from its attach at 2026-11-27T18:00:00.000Z to the detach at 2026-11-27T18:00:02.000Z"; !strings.Contains(strings.Join(b.Notes, "\n"), want) {
		t.Errorf("notes lack %q:\n%s", want, b.Notes)
	}
}

// askedMatcher wants no process and records which it was asked about.
type askedMatcher struct{ asked []int }

func (m *askedMatcher) Select() ([]Proc, error) { return nil, nil }
func (m *askedMatcher) String() string          { return "--asked" }
func (m *askedMatcher) Match(pid int) (Proc, bool) {
	m.asked = append(m.asked, pid)
	return Proc{}, false
}

// TestPollEventsPassesOverForks looks at the processes exec'ed and the
// forks of the candidates only: the forks of the others run what their
// parents run. A candidate's fork stays one whatever Match says of it
// now (it may have exec'ed or exited since), and so does an exec'ed one.
func TestPollEventsPassesOverForks(t *testing.T) {
	m := &askedMatcher{}
	w, err := New(Options{Select: m, Dir: t.TempDir()})
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.matches = map[int]bool{10: true} // wanted at the last full look
	evs := []procEvent{
		{PID: 11, Parent: 10, Fork: true}, // a candidate's fork: asked
		{PID: 21, Parent: 20, Fork: true}, // another's fork: not asked
		{PID: 12, Parent: 11, Fork: true}, // the fork's fork: asked
		{PID: 21},                         // an exec: asked
		{PID: 22, Parent: 21, Fork: true}, // the exec'ed one's fork: asked
		{PID: 31, Parent: 30, Fork: true}, // another's: not asked
	}
	if err := w.pollEvents(evs); err != nil {
		t.Fatal(err)
	}
	if want := []int{11, 12, 21, 22}; !slices.Equal(m.asked, want) {
		t.Errorf("asked about %v, want %v", m.asked, want)
	}
}

// TestReadFile reads a file longer than its first buffer whole, and says
// a missing one is missing.
func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "procs")
	want := strings.Repeat("4242\n", 1000)
	os.WriteFile(path, []byte(want), 0o644)
	if got, err := readFile(path); err != nil || string(got) != want {
		t.Errorf("readFile = %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
	if _, err := readFile(path + ".none"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}
