//go:build linux

package integration

import (
	"strconv"
	"strings"
	"testing"
)

// shortHostLines are the lines of shorthosts.c's two functions after 6000
// rounds, by construction (every third call of twoexits returns early) and
// as gcov gives them (TestShortHosts checks both); twoexits' closing brace
// has no count in gcov's listing.
var shortHostLines = map[string]int64{"ONEEXIT_CALL": 6000, "ONEEXIT_END": 6000, "TWOEXITS_EARLY": 2000, "TWOEXITS_RC": 4000}

// TestShortHosts: a return site too short for a jmp rel32 (`nop; leave;
// ret`; `mov -4(%rbp),%eax` then `leave; ret`) after a block of over 128
// bytes that ends in the call, with no padding after the function: its jmp
// rel8 reaches only the long block's tail, where its landing goes, the long
// block displacing its instructions through the landing; two such sites
// share one host. 22 sites of SQLite's driver kept their breakpoints so
// (9,160 traps in 3 s of its attached loop). The run traps at first hits
// only, and the counts are gcov's and every engine's.
func TestShortHosts(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	gcov := gcovCounts(t, gcovRun{src: "shorthosts.c", args: []string{"6000"}})
	for m, n := range shortHostLines {
		if l := markerLine(t, "shorthosts.c", m); gcov[l] != n {
			t.Errorf("gcov: shorthosts.c:%d (%s) %d, want %d", l, m, gcov[l], n)
		}
	}
	exe := buildC(t, "shorthosts.c", "-g", "-O0")
	args := []string{"--lines", "--funcs", exe, "6000"}
	// 16,000 hits of the three short sites: a trap each if they kept
	// their breakpoints.
	acrossEngines(t, args, "total 12014000\n", "keep a breakpoint", func(p *profile) {
		wantFunc(t, p, "oneexit", 6000)
		wantFunc(t, p, "twoexits", 6000)
		wantFunc(t, p, "leaf", 10000)
		for m, n := range shortHostLines {
			wantLine(t, p, "shorthosts.c", markerLine(t, "shorthosts.c", m), n)
		}
	})
}

// acrossEngines runs patchprof -v with args under the jump, xol and
// classic engines, checks that each exits 0 with the target's stdout
// (the native one), that the jump engine patched sites, trapped at first
// hits only and has no note containing banned, each run with check, and
// that the three counted the same.
func acrossEngines(t *testing.T, args []string, stdout, banned string, check func(p *profile)) {
	t.Helper()
	var profs []*profile
	for _, e := range []string{"jump", "xol", "classic"} {
		res, p := runProfile(t, runOpts{args: append([]string{"-v", "--engine=" + e}, args...)})
		wantExitCode(t, res, p, 0)
		if res.stdout != stdout {
			t.Errorf("%s: stdout %q, want the native %q", res.cmdline, res.stdout, stdout)
		}
		if e == "jump" {
			wantJumped(t, p)
			wantFewTraps(t, res, p, 10)
			for _, n := range p.Notes {
				if strings.Contains(n, banned) {
					t.Errorf("%s: %q", res.cmdline, n)
				}
			}
		}
		check(p)
		profs = append(profs, p)
	}
	sameEngineCounts(t, profs[0], profs[1], nil)
	sameEngineCounts(t, profs[0], profs[2], nil)
}

// TestShortHostsDetach attaches to shorthosts while it runs its rounds and
// detaches: the short sites' landings were written in their host's dead
// bytes, and every byte of the code is the file's again (checkText); the
// program runs on to its end.
func TestShortHostsDetach(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "shorthosts.c", "-g", "-O0")
	attachDetachJump(t, exe, []string{"--lines", "--funcs"}, []string{"oneexit", "twoexits"})
}

// attachDetachJump starts exe with "stdin" (startTarget), attaches to it
// for a second under the jump engine with args, and checks the detach:
// each of funcs counted, the process trapping at first hits only, its code
// the file's again (checkText), and the program running on to its end.
func attachDetachJump(t *testing.T, exe string, args, funcs []string) {
	t.Helper()
	cmd, pid, in, sc := startTarget(t, exe)
	args = append(append([]string{"-v", "--engine=jump"}, args...), "-p", strconv.Itoa(pid), "--duration", "1s")
	res, p := runProfile(t, runOpts{args: args})
	if res.code != 0 || !p.Exit.Detached {
		t.Fatalf("patchprof exit %d, saved exit %+v; want 0 and detached\n%s", res.code, p.Exit, res)
	}
	for _, name := range funcs {
		if n, ok := funcCount(p, name); !ok || n == 0 {
			t.Errorf("%s counted %d (%v) in a second of rounds", name, n, ok)
		}
	}
	wantJumped(t, p)
	wantFewTraps(t, res, p, 10)
	checkText(t, pid, exe)
	checkRunsOn(t, cmd, pid, in, sc)
}
