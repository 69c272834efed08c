//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// cacheC's counts are known by construction: sq is called N times, the
// loop's body runs N times.
const cacheC = `#include <stdio.h>
#ifndef N
#define N 1000
#endif
static long sq(long x) {
	return x * x; /* SQ */
}
int main(void) {
	long s = 0;
	for (long i = 0; i < N; i++)
		s += sq(i); /* BODY */
	printf("%ld\n", s);
	return 0;
}
`

// buildCacheC compiles cacheC with -DN=n into exe, in place: a rebuild at
// the same path.
func buildCacheC(t *testing.T, exe string, n string) {
	t.Helper()
	src := filepath.Join(filepath.Dir(exe), "cache.c")
	if err := os.WriteFile(src, []byte(cacheC), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gcc", "-g", "-O0", "-DN="+n, "-o", exe, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
}

// cacheRun runs exe under --lines --funcs -v with the analysis cache in
// cacheHome, and checks the counts against n (N's value).
func cacheRun(t *testing.T, exe, cacheHome string, n int64, extra ...string) *profile {
	t.Helper()
	args := append(append([]string{"--lines", "--funcs", "-v", "-o", os.DevNull}, extra...), exe)
	res, p := runProfile(t, runOpts{args: args, env: []string{"XDG_CACHE_HOME=" + cacheHome}})
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res)
	}
	wantLine(t, p, "cache.c", markerIn(t, cacheC, "BODY"), n)
	wantLine(t, p, "cache.c", markerIn(t, cacheC, "SQ"), n)
	wantFunc(t, p, "sq", n)
	wantFunc(t, p, "main", 1)
	return p
}

// markerIn returns the 1-based line of src holding /* marker */.
func markerIn(t *testing.T, src, marker string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, "/* "+marker+" */") {
			return i + 1
		}
	}
	t.Fatalf("no marker %s", marker)
	return 0
}

// cacheNotes returns p's notes about the analysis cache.
func cacheNotes(p *profile) []string {
	var out []string
	for _, n := range p.Notes {
		if strings.Contains(n, "analysis cache") {
			out = append(out, n)
		}
	}
	return out
}

func hasNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// TestAnalysisCache: a program run cold (the cache filled), warm (the
// line table, subprograms and branch targets read from it) and with --no-cache (neither)
// gets the same exact counts and the same lines, functions and sites; a
// rebuild at the same path is not served the old analysis; corrupt entries
// are a miss with a note.
func TestAnalysisCache(t *testing.T) {
	needs(t)
	mustHaveCC(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "cache")
	buildCacheC(t, exe, "1000")
	home := filepath.Join(dir, "xdg")

	// The branch targets are the jump plan's: the default engine's.
	jump := os.Getenv(engineEnv) == "" || os.Getenv(engineEnv) == "jump"
	targets := func(notes []string, what string) bool {
		return !jump || hasNote(notes, "branch targets of "+exe+": "+what)
	}
	cold := cacheRun(t, exe, home, 1000)
	if notes := cacheNotes(cold); !hasNote(notes, "line table of "+exe+": miss, stored") || !hasNote(notes, "subprograms of "+exe+": miss, stored") ||
		!targets(notes, "miss, stored") {
		t.Errorf("cold run: cache notes %q, want the line table, subprograms and (jump engine: %v) branch targets stored", notes, jump)
	}
	entries, _ := filepath.Glob(filepath.Join(home, "patchprof", "*.entry"))
	want := 2
	if jump {
		want = 3
	}
	if len(entries) != want {
		t.Fatalf("cold run left %d entries in %s, want %d (line table, subprograms, and under the jump engine branch targets)", len(entries), home, want)
	}
	warm := cacheRun(t, exe, home, 1000)
	if notes := cacheNotes(warm); !hasNote(notes, "line table of "+exe+": hit") || !hasNote(notes, "subprograms of "+exe+": hit") ||
		!targets(notes, "hit") {
		t.Errorf("warm run: cache notes %q, want every analysis a hit", notes)
	}
	// Without -v, the listing does not say what the cache served.
	res := run(t, runOpts{args: []string{"--lines", "--funcs", exe}, env: []string{"XDG_CACHE_HOME=" + home}})
	if res.code != 0 || strings.Contains(res.stderr, "note: analysis cache") {
		t.Errorf("a warm run without -v: exit %d, the listing shows the cache's notes:\n%s", res.code, res.stderr)
	}
	off := cacheRun(t, exe, home, 1000, "--no-cache")
	if notes := cacheNotes(off); len(notes) != 0 {
		t.Errorf("--no-cache: cache notes %q, want none", notes)
	}
	for name, p := range map[string]*profile{"warm": warm, "--no-cache": off} {
		if !reflect.DeepEqual(p.Lines, cold.Lines) || !reflect.DeepEqual(p.Functions, cold.Functions) || !reflect.DeepEqual(p.Sites, cold.Sites) {
			t.Errorf("%s run: lines, functions or sites differ from the cold run's", name)
		}
	}

	// Stale: rebuilt at the same path with other counts.
	buildCacheC(t, exe, "2000")
	rebuilt := cacheRun(t, exe, home, 2000)
	if notes := cacheNotes(rebuilt); hasNote(notes, ": hit") {
		t.Errorf("rebuilt program: cache notes %q, want misses", notes)
	}

	// Corrupt: every entry overwritten with garbage.
	entries, _ = filepath.Glob(filepath.Join(home, "patchprof", "*.entry"))
	for _, e := range entries {
		if err := os.WriteFile(e, []byte("garbage, not an entry"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	damaged := cacheRun(t, exe, home, 2000)
	if notes := cacheNotes(damaged); !hasNote(notes, "is corrupt") || !hasNote(notes, "line table of "+exe+": miss, stored") ||
		!targets(notes, "miss, stored") {
		t.Errorf("corrupt entries: cache notes %q, want a corrupt note and the analysis stored again", notes)
	}
	again := cacheRun(t, exe, home, 2000)
	if notes := cacheNotes(again); !hasNote(notes, "line table of "+exe+": hit") {
		t.Errorf("after the corrupt entries were replaced: cache notes %q, want a hit", notes)
	}
}

// TestAnalysisCacheConcurrent: two patchprofs on one binary at once, with
// an empty cache, both fill it; both count exactly, and a third run hits.
func TestAnalysisCacheConcurrent(t *testing.T) {
	needs(t)
	mustHaveCC(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "cache")
	buildCacheC(t, exe, "1000")
	home := filepath.Join(dir, "xdg")
	// The group returns once both parallel runs have ended.
	t.Run("together", func(t *testing.T) {
		for _, name := range []string{"first", "second"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cacheRun(t, exe, home, 1000)
			})
		}
	})
	if notes := cacheNotes(cacheRun(t, exe, home, 1000)); !hasNote(notes, "line table of "+exe+": hit") {
		t.Errorf("after two concurrent runs: cache notes %q, want a hit", notes)
	}
}
