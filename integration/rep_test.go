//go:build linux

package integration

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestRepeatingInstructions plants at instructions that execute in place:
// a rep movsb moving 4096 bytes is one execution (not 4096), and a loop
// instruction jumping to itself is a new execution on every trip.
func TestRepeatingInstructions(t *testing.T) {
	needs(t)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"pie", []string{"-O0", "-mno-red-zone"}},
		{"nopie", []string{"-O0", "-mno-red-zone", "-no-pie", "-fno-pie"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			exe := buildC(t, "rep.c", tc.flags...)
			res, p := runProfile(t, runOpts{args: []string{"--funcs", exe}})
			wantExitCode(t, res, p, 0)
			if res.stdout != "copies 100 trips 70\n" {
				t.Errorf("target's stdout %q, want \"copies 100 trips 70\\n\"", res.stdout)
			}
			wantFunc(t, p, "repcopy", 100)
			wantFunc(t, p, "selfloop", 70)
			// The raw count at each function's first instruction.
			for name, want := range map[string]int64{"repcopy": 100, "selfloop": 70} {
				f, ok := funcByName(p, name)
				if !ok {
					continue
				}
				addr, err := strconv.ParseUint(strings.TrimPrefix(f.Address, "0x"), 16, 64)
				if err != nil {
					t.Errorf("function %s: address %q: %v", name, f.Address, err)
					continue
				}
				found := false
				for _, s := range p.Sites {
					a, err := strconv.ParseUint(strings.TrimPrefix(s.Address, "0x"), 16, 64)
					if err != nil || a != addr {
						continue
					}
					found = true
					if s.Count != want {
						t.Errorf("site %s (%s): count %d, want %d", s.Address, name, s.Count, want)
					}
				}
				if !found {
					t.Errorf("no site at %s (%s)", f.Address, name)
				}
			}
		})
	}
}

// TestRepInterrupted: a rep movsb of 16 MiB interrupted by a 1 ms
// SIGALRM timer whose handler is profiled too. The handler's hits during the
// half-done instruction are counted, the instruction counts once per call,
// and nothing dies of SIGTRAP, under both engines.
func TestRepInterrupted(t *testing.T) {
	needs(t)
	exe := buildC(t, "rep.c", "-O0", "-mno-red-zone")
	for _, engine := range []string{"xol", "classic"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			res, p := runProfile(t, runOpts{args: []string{"--engine", engine, "--funcs", "--func", "^(repcopy|on_alrm)$", exe, "alarm"}})
			wantExitCode(t, res, p, 0)
			var alarms int64
			if _, err := fmt.Sscanf(res.stdout, "copies 20 alarms %d", &alarms); err != nil {
				t.Fatalf("target's stdout %q: want \"copies 20 alarms N\": %v", res.stdout, err)
			}
			if alarms == 0 {
				t.Fatalf("no SIGALRM arrived during the copies: the test proves nothing")
			}
			wantFunc(t, p, "repcopy", 20)
			wantFunc(t, p, "on_alrm", alarms)
		})
	}
}
