//go:build linux

package integration

import (
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
