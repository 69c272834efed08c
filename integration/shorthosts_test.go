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
	var profs []*profile
	for _, e := range []string{"jump", "xol", "classic"} {
		res, p := runProfile(t, runOpts{args: []string{"-v", "--engine=" + e, "--lines", "--funcs", exe, "6000"}})
		wantExitCode(t, res, p, 0)
		if res.stdout != "total 12014000\n" {
			t.Errorf("%s: stdout %q, want the native \"total 12014000\\n\"", res.cmdline, res.stdout)
		}
		wantFunc(t, p, "oneexit", 6000)
		wantFunc(t, p, "twoexits", 6000)
		wantFunc(t, p, "leaf", 10000)
		for m, n := range shortHostLines {
			wantLine(t, p, "shorthosts.c", markerLine(t, "shorthosts.c", m), n)
		}
		if e == "jump" {
			wantJumped(t, p)
			// 16,000 hits of the three short sites: a trap each if they
			// kept their breakpoints.
			wantFewTraps(t, res, p, 10)
			for _, n := range p.Notes {
				if strings.Contains(n, "keep a breakpoint") {
					t.Errorf("%s: %q", res.cmdline, n)
				}
			}
		}
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
	cmd, pid, in, sc := startTarget(t, exe)
	res, p := runProfile(t, runOpts{args: []string{"-v", "--engine=jump", "--lines", "--funcs", "-p", strconv.Itoa(pid), "--duration", "1s"}})
	if res.code != 0 || !p.Exit.Detached {
		t.Fatalf("patchprof exit %d, saved exit %+v; want 0 and detached\n%s", res.code, p.Exit, res)
	}
	for _, name := range []string{"oneexit", "twoexits"} {
		if n, ok := funcCount(p, name); !ok || n == 0 {
			t.Errorf("%s counted %d (%v) in a second of rounds", name, n, ok)
		}
	}
	wantJumped(t, p)
	wantFewTraps(t, res, p, 10)
	checkText(t, pid, exe)
	checkRunsOn(t, cmd, pid, in, sc)
}
