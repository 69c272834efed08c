//go:build linux

package integration

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"encoding/json"
	"os"
)

// timedProfile is the part of a saved profile the --time tests read, as
// docs/profile-format.md documents it.
type timedProfile struct {
	Time *struct {
		Rate    int    `json:"rate_hz"`
		Samples uint64 `json:"samples"`
		TimeNS  uint64 `json:"time_ns"`
	} `json:"time"`
	Lines []struct {
		File  string `json:"file"`
		Line  int    `json:"line"`
		Count uint64 `json:"count"`
	} `json:"lines"`
	Functions []timedFunc `json:"functions"`
	Sites     []struct {
		Address string `json:"address"`
		Count   uint64 `json:"count"`
	} `json:"sites"`
}

type timedFunc struct {
	Name    string `json:"name"`
	Count   uint64 `json:"count"`
	Samples uint64 `json:"samples"`
	TimeNS  uint64 `json:"time_ns"`
}

// loadTimed reads a saved profile.
func loadTimed(t *testing.T, path string) *timedProfile {
	t.Helper()
	return loadJSON[timedProfile](t, path)
}

// loadJSON reads the JSON file at path into a new T: a saved profile seen
// through the fields a test reads.
func loadJSON[T any](t *testing.T, path string) *T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p T
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &p
}

// mustSampleTime skips a --time test when the kernel refused perf events,
// which patchprof says in one line (perf_event_paranoid 3, a seccomp
// policy); in CI it is not refused.
func mustSampleTime(t *testing.T, res result) {
	t.Helper()
	// The ptrace fallback's line names the refusal too: its own tests
	// (timefallback_test.go) check it with their looser bounds.
	if strings.Contains(res.stderr, "perf_event_open refused") {
		t.Skipf("perf events refused here: %s", res.stderr)
	}
}

// timedRun runs costs.c (with args) under --funcs --time, saving the
// profile, and returns the profile, the run and the saved file.
func timedRun(t *testing.T, flags []string, args ...string) (*timedProfile, result, string) {
	t.Helper()
	exe := buildC(t, "costs.c", "-g", "-O1", "-pthread")
	save := filepath.Join(t.TempDir(), "costs.json")
	argv := append(append([]string{"--funcs", "--time", "--save", save}, flags...), exe)
	res := run(t, runOpts{args: append(argv, args...)})
	mustSampleTime(t, res)
	if res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	p := loadTimed(t, save)
	if p.Time == nil || p.Time.Samples == 0 {
		t.Fatalf("no time in the profile: %+v\n%s", p.Time, res)
	}
	return p, res, save
}

// checkRatio checks the time of costs.c's two functions: called calls times
// each, thrice's time is 3 times once's within 15%, and so is its time per
// call.
func checkRatio(t *testing.T, p *timedProfile, calls uint64) {
	t.Helper()
	checkRatioWithin(t, p, calls, 0.15)
}

// checkRatioWithin is checkRatio with the ratio within tol (0.15: 15%).
func checkRatioWithin(t *testing.T, p *timedProfile, calls uint64, tol float64) {
	t.Helper()
	fs := map[string]timedFunc{}
	for _, f := range p.Functions {
		fs[f.Name] = f
	}
	once, thrice := fs["once"], fs["thrice"]
	if once.Count != calls || thrice.Count != calls {
		t.Fatalf("once called %d times, thrice %d; want %d each", once.Count, thrice.Count, calls)
	}
	if once.Samples == 0 {
		t.Fatalf("once has no samples: %+v", once)
	}
	ratio := float64(thrice.TimeNS) / float64(once.TimeNS)
	t.Logf("thrice %d samples, once %d: ratio %.3f (%d samples in all)", thrice.Samples, once.Samples, ratio, p.Time.Samples)
	if ratio < 3*(1-tol) || ratio > 3*(1+tol) {
		t.Errorf("time ratio thrice/once = %.3f, want 3 within %.0f%%", ratio, 100*tol)
	}
	if thrice.TimeNS/thrice.Count <= once.TimeNS/once.Count {
		t.Errorf("time per call: thrice %d ns, once %d ns; want thrice's longer", thrice.TimeNS/thrice.Count, once.TimeNS/once.Count)
	}
	// The two functions are nearly all of the program's user time.
	if share := float64(once.Samples+thrice.Samples) / float64(p.Time.Samples); share < 0.9 {
		t.Errorf("once and thrice hold %.1f%% of the samples, want over 90%%", 100*share)
	}
}

// TestTimeRatio samples a program whose functions' costs are known by
// construction, and checks the listing and the pprof export against the
// saved profile.
func TestTimeRatio(t *testing.T) {
	needs(t)
	p, res, save := timedRun(t, nil)
	checkRatio(t, p, 200)
	t.Run("listing", func(t *testing.T) {
		// The function table shows each function's samples, sorted by time.
		for _, name := range []string{"thrice", "once"} {
			var f timedFunc
			for _, g := range p.Functions {
				if g.Name == name {
					f = g
				}
			}
			re := regexp.MustCompile(`(?m)^\s*200\s+[0-9.]+%\s+\S+\s+` + strconv.FormatUint(f.Samples, 10) + `\s+` + name + `\s`)
			if !re.MatchString(res.stderr) {
				t.Errorf("function table lacks %s with %d samples:\n%s", name, f.Samples, res.stderr)
			}
		}
		if strings.Index(res.stderr, " thrice ") > strings.Index(res.stderr, " once ") {
			t.Errorf("function table not sorted by time:\n%s", res.stderr)
		}
	})
	t.Run("pprof", func(t *testing.T) {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("go not in PATH: cannot run go tool pprof")
		}
		pb := filepath.Join(t.TempDir(), "costs.pb.gz")
		if r := run(t, runOpts{args: []string{"report", "--format", "pprof", "-o", pb, save}}); r.code != 0 {
			t.Fatalf("report: %s", r)
		}
		out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=cpu", "-unit=ns", pb).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof: %v\n%s", err, out)
		}
		for _, f := range p.Functions {
			if f.Name != "once" && f.Name != "thrice" {
				continue
			}
			re := regexp.MustCompile(`(?m)^\s*` + strconv.FormatUint(f.TimeNS, 10) + `ns\s.*\s` + f.Name + `$`)
			if !re.Match(out) {
				t.Errorf("go tool pprof -top -sample_index=cpu does not show %s with %d ns (the profile's):\n%s", f.Name, f.TimeNS, out)
			}
		}
	})
}

// TestTimeThreads is TestTimeRatio's check with four threads making the
// calls, on every CPU (--pin=false).
func TestTimeThreads(t *testing.T) {
	needs(t)
	p, _, _ := timedRun(t, []string{"--pin=false"}, "4")
	checkRatio(t, p, 4*200)
}

// TestTimeSameCounts checks that sampling changes no count: a sampled run
// and a plain run of the same program give identical line, function and
// site counts.
func TestTimeSameCounts(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	var ps [2]*timedProfile
	for k, flags := range [][]string{{"--time"}, nil} {
		save := filepath.Join(dir, strconv.Itoa(k)+".json")
		args := append(append([]string{"--lines", "--funcs", "--save", save}, flags...), exe)
		res := run(t, runOpts{args: args})
		mustSampleTime(t, res)
		if res.code != 0 {
			t.Fatalf("run: %s", res)
		}
		ps[k] = loadTimed(t, save)
	}
	if ps[0].Time == nil || ps[1].Time != nil {
		t.Fatalf("time in the sampled run %v, in the plain run %v; want only the first", ps[0].Time, ps[1].Time)
	}
	sameCounts(t, ps[0], ps[1])
}

// sameCounts checks that two profiles have identical line, function and
// site counts.
func sameCounts(t *testing.T, sampled, plain *timedProfile) {
	t.Helper()
	if len(sampled.Lines) != len(plain.Lines) || len(sampled.Functions) != len(plain.Functions) || len(sampled.Sites) != len(plain.Sites) {
		t.Fatalf("sampled run has %d lines, %d functions, %d sites; plain %d, %d, %d",
			len(sampled.Lines), len(sampled.Functions), len(sampled.Sites), len(plain.Lines), len(plain.Functions), len(plain.Sites))
	}
	for i, l := range sampled.Lines {
		if q := plain.Lines[i]; l.File != q.File || l.Line != q.Line || l.Count != q.Count {
			t.Errorf("line %s:%d: %d sampled, %d plain", l.File, l.Line, l.Count, q.Count)
		}
	}
	for i, f := range sampled.Functions {
		if q := plain.Functions[i]; f.Name != q.Name || f.Count != q.Count {
			t.Errorf("function %s: %d sampled, %d plain", f.Name, f.Count, q.Count)
		}
	}
	for i, s := range sampled.Sites {
		if q := plain.Sites[i]; s.Address != q.Address || s.Count != q.Count {
			t.Errorf("site %s: %d sampled, %d plain", s.Address, s.Count, q.Count)
		}
	}
}
