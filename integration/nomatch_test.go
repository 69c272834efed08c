//go:build linux

package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingMatchedOnce: when --func matches nothing, the message is on
// stderr once: in the listing there, or alone when the report goes to -o
// (and in the report too).
func TestNothingMatchedOnce(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	const msg = "matched the selection (check --func, --file and --lib)"
	res := run(t, runOpts{args: []string{"--func", "zzz_no_such_function", exe}})
	if n := strings.Count(res.stderr, msg); res.code != 0 || n != 1 {
		t.Errorf("exit %d, message %d times on stderr; want 0 and once\n%s", res.code, n, res)
	}
	out := filepath.Join(t.TempDir(), "r.txt")
	res = run(t, runOpts{args: []string{"--func", "zzz_no_such_function", "-o", out, exe}})
	if n, m := strings.Count(res.stderr, msg), strings.Count(readFile(t, out), msg); res.code != 0 || n != 1 || m != 1 {
		t.Errorf("-o: exit %d, message %d times on stderr and %d in the report; want 0, once and once\n%s", res.code, n, m, res)
	}
}
