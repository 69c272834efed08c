//go:build linux

package integration

import (
	"os/exec"
	"strings"
	"testing"
)

// Saved contexts inside a patch (tracker issue 24, item 3;
// docs/design.md, "Saved contexts inside a patch"): threads parked in a
// signal handler, coroutines switched away with swapcontext, and a thread
// blocked in a system call of a function's first block, each inside a
// function another thread then calls (the jump engine patches it at that
// first hit). savedctx.c prints its own counters; each function is called
// a known number of times.

// TestSavedContexts runs each mode natively and under patchprof: the same
// output and exit status, and every function counted as often as it was
// called.
func TestSavedContexts(t *testing.T) {
	mustHaveCC(t)
	exe := buildC(t, "savedctx.c", "-g", "-O0", "-pthread")
	for _, tc := range []struct {
		mode  string
		funcs map[string]int64
	}{
		{"handler", map[string]int64{"spin": 5, "spinner": 4, "onusr1": 4}},
		{"coro", map[string]int64{"park": 5, "coro": 4}},
		{"first", map[string]int64{"gate": 2, "gatekeeper": 1}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			native := exec.Command(exe, tc.mode)
			native.Stdin = strings.NewReader("go\n")
			want, err := native.Output()
			if err != nil {
				t.Fatalf("native %s: %v", tc.mode, err)
			}
			res, p := runProfile(t, runOpts{args: []string{"--funcs", exe, tc.mode}, stdin: "go\n"})
			if res.code != 0 {
				t.Fatalf("exit status %d, natively 0\n%s", res.code, res)
			}
			if sortedLines(res.stdout) != sortedLines(string(want)) {
				t.Errorf("output differs from the native run's:\n%s\nnatively:\n%s", res.stdout, want)
			}
			for name, n := range tc.funcs {
				if got, _ := funcCount(p, name); got != n {
					t.Errorf("%s counted %d times, called %d", name, got, n)
				}
			}
		})
	}
}

// sortedLines returns s's lines in order: threads print in any order.
func sortedLines(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j] < l[j-1]; j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
	return strings.Join(l, "\n")
}
