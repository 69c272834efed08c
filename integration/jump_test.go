//go:build linux

package integration

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The in-process engine (--engine jump) counts in the target. These tests
// run it explicitly on what only it can do in reasonable time (millions of
// hits) and on its own lifecycle: threads, fork, vfork, exec, SIGKILL,
// signals inside trampolines, attach and detach. Every other test of the
// package runs under it too (TestJumpEngine).

// jumpOnly skips a test of the in-process engine in the reruns of the
// package under another engine: they would run it again unchanged.
func jumpOnly(t *testing.T) {
	t.Helper()
	if e := os.Getenv(engineEnv); e != "" && e != "jump" {
		t.Skipf("an --engine=jump test: already run outside the %s=%s rerun", engineEnv, e)
	}
	needs(t)
}

// wantJumped checks that the in-process engine patched at least one site.
func wantJumped(t *testing.T, p *profile) {
	t.Helper()
	for _, n := range p.Notes {
		var planned, patched int
		if _, err := fmt.Sscanf(n, "in-process engine: %d sites can count in the target, %d were patched", &planned, &patched); err == nil {
			if patched == 0 {
				t.Errorf("no site was patched: %q", n)
			}
			return
		}
	}
	t.Errorf("no note of the in-process engine in %q", p.Notes)
}

// TestJumpThreads: 4 threads call work 2,500,000 times each, on the same
// sites at the same time: each thread counts in its own slab, and the sum
// is exact (a shared counter without a lock loses counts). With blocks,
// sites are patched while other threads run into them: a thread our
// interrupt stopped just past a site's int3, its trap not yet reported,
// must be left to that trap (it once was moved into the trampoline as if
// it had run the site's first instruction, and died of the SIGTRAP).
func TestJumpThreads(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "threads.c", "-g", "-O0", "-pthread")
	for _, what := range [][]string{{"--funcs"}, {"--lines", "--funcs", "--blocks"}} {
		for k := 0; k < 3; k++ {
			args := append(append([]string{"--engine=jump"}, what...), exe, "2500000")
			res, p := runProfile(t, runOpts{args: args})
			wantExitCode(t, res, p, 0)
			if !strings.Contains(res.stdout, "calls 10000000\n") {
				t.Errorf("target's stdout %q, want \"calls 10000000\"", res.stdout)
			}
			wantFunc(t, p, "work", 10000000)
			wantFunc(t, p, "worker", 4)
			if len(what) > 1 {
				wantLine(t, p, "threads.c", markerLine(t, "threads.c", "WORK_BODY"), 10000000)
			}
			wantJumped(t, p)
		}
	}
}

// TestJumpLifecycle: forked children count in memory of their own (one of
// them killed by SIGKILL in the middle), a vfork child execs, the program
// execs itself; f's count is the sum over every process, and the lines
// equal the out-of-line engine's.
func TestJumpLifecycle(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "jumplife.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--lines", "--funcs", exe}})
	wantExitCode(t, res, p, 0)
	if res.stdout != "again\n" {
		t.Errorf("target's stdout %q, want \"again\\n\"", res.stdout)
	}
	wantFunc(t, p, "f", 251007)
	wantFunc(t, p, "calls", 2)
	wantJumped(t, p)
	_, x := runProfile(t, runOpts{args: []string{"--engine=xol", "--lines", "--funcs", exe}})
	got, want := linesOf(p, "jumplife.c"), linesOf(x, "jumplife.c")
	for l, n := range want {
		if got[l] != n {
			t.Errorf("jumplife.c:%d: %d under jump, %d under xol", l, got[l], n)
		}
	}
}

// TestJumpSignals: a timer signal every millisecond while the main loop
// calls f 20,000,000 times: signals arrive with the thread inside a
// trampoline. The counts equal the program's own.
func TestJumpSignals(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "jumpsig.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--funcs", exe}})
	wantExitCode(t, res, p, 0)
	var f, g int64
	if _, err := fmt.Sscanf(res.stdout, "f %d g %d", &f, &g); err != nil || f != 20000000 {
		t.Fatalf("target's stdout %q", res.stdout)
	}
	wantFunc(t, p, "f", f)
	wantFunc(t, p, "g", g)
	wantFunc(t, p, "on_alarm", g)
	wantJumped(t, p)
}

// TestJumpSignalsInDispatch: a second thread signals the main thread as
// fast as it takes the signals while the main thread runs a switch whose
// empty cases share their jump-table target with the default; their
// counts come from the dispatch trampoline's second counter update, the
// table entry's. The program runs until its handler has run 3,000
// times; signals land before, between and after the two updates (about
// one in three hundred between them), and each case label still counts
// exactly the values the program's own tally says reached it. (A thread
// stepped on from between the updates to where both are made once went
// back to the site without its counts undone, and counted the entry
// twice.)
func TestJumpSignalsInDispatch(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	src := filepath.Join(testdataDir, "dispsig.c")
	exe := buildC(t, "dispsig.c", "-g", "-O0", "-pthread")
	const chunk = 1_000_000
	res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--lines", exe, strconv.Itoa(chunk), "3000"}})
	wantExitCode(t, res, p, 0)
	var runs, skip, eight, other, handled int64
	if _, err := fmt.Sscanf(res.stdout, "%d %d %d %d %d", &runs, &skip, &eight, &other, &handled); err != nil || runs == 0 || handled < 3000 {
		t.Fatalf("target's stdout %q", res.stdout)
	}
	wantLine(t, p, "dispsig.c", markerLineIn(t, src, "SWITCH"), runs*chunk)
	wantLine(t, p, "dispsig.c", markerLineIn(t, src, "SKIP_CASE"), skip)
	wantLine(t, p, "dispsig.c", markerLineIn(t, src, "EIGHT_CASE"), eight)
	wantLine(t, p, "dispsig.c", markerLineIn(t, src, "RUN_DEFAULT"), other)
	wantLine(t, p, "dispsig.c", markerLineIn(t, src, "on_usr1"), handled)
	wantJumped(t, p)
}

// TestJumpAttach attaches the in-process engine to a running program for
// a second and detaches: the program runs on to its end, and nothing of
// patchprof is left in it: no counter memory, no trampolines, its code
// bytes those of its file.
func TestJumpAttach(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "heartbeat.c", "-g", "-O0", "-pthread")
	cmd, pid, in, sc := startTarget(t, exe)
	before := readFile(t, fmt.Sprintf("/proc/%d/maps", pid))
	res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--funcs", "--lines", "-p", strconv.Itoa(pid), "--duration", "1s"}})
	if res.code != 0 || !p.Exit.Detached {
		t.Fatalf("patchprof exit %d, saved exit %+v; want 0 and detached\n%s", res.code, p.Exit, res)
	}
	if n, ok := funcCount(p, "work"); !ok || n == 0 {
		t.Errorf("work counted %d (%v) in a second of three threads calling it", n, ok)
	}
	wantJumped(t, p)
	after := readFile(t, fmt.Sprintf("/proc/%d/maps", pid))
	if after != before {
		t.Errorf("the target's mappings changed across attach and detach:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	checkText(t, pid, exe)
	checkRunsOn(t, cmd, pid, in, sc)
}

// checkText compares the code of exe mapped in process pid with the file.
func checkText(t *testing.T, pid int, exe string) {
	t.Helper()
	file, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, l := range strings.Split(execMappings(t, pid), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[5] != exe {
			continue
		}
		var lo, hi, off uint64
		if _, err := fmt.Sscanf(f[0], "%x-%x", &lo, &hi); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscanf(f[2], "%x", &off); err != nil {
			t.Fatal(err)
		}
		n := min(hi-lo, uint64(len(file))-off)
		got := make([]byte, n)
		if _, err := mem.ReadAt(got, int64(lo)); err != nil {
			t.Fatalf("read the target's code at %#x: %v", lo, err)
		}
		if want := file[off : off+n]; !bytes.Equal(got, want) {
			k := 0
			for got[k] == want[k] {
				k++
			}
			t.Errorf("the target's code differs from %s at %#x: % x, want % x", exe, lo+uint64(k), got[k:min(k+8, len(got))], want[k:min(k+8, len(want))])
		}
	}
}

// TestJumpNoFollow: with --no-follow a forked child is let go with its
// code, its GS base and its mappings as they would be without patchprof:
// it reads a GS base of 0 and runs its calls of f untraced.
func TestJumpNoFollow(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "jumplife.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--funcs", "--no-follow", exe, "gs"}})
	wantExitCode(t, res, p, 0)
	if res.stdout != "child gs zero\n" {
		t.Errorf("target's stdout %q, want \"child gs zero\\n\"", res.stdout)
	}
	wantFunc(t, p, "f", 10)
	wantJumped(t, p)
}

// TestJumpFreshThreads: a Go program starts its threads while its first
// sites are hit. A thread created but not yet at its first stop refuses
// ptrace (ESRCH); giving it a counter slab at another thread's first hit
// once turned the whole process back to breakpoints ("at run time: no
// room for its trampoline or counter", about 1 run in 30). It gets its
// slab when it first resumes; no site is refused at run time.
func TestJumpFreshThreads(t *testing.T) {
	jumpOnly(t)
	needsGo(t)
	t.Parallel()
	exe := buildGo(t, "goroutines")
	for k := 0; k < 20; k++ {
		res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--lines", "--funcs", exe}})
		wantExitCode(t, res, p, 0)
		wantLine(t, p, "main.go", markerLine(t, "goroutines/main.go", "WORK_BODY"), 40000)
		wantJumped(t, p)
		for _, n := range p.Notes {
			if strings.Contains(n, "at run time") {
				t.Fatalf("run %d: a site was refused at run time: %q", k, n)
			}
		}
	}
}

// TestArcsInProcess: the edges of init_array (a test, then a loop closed
// by another test) and of classify (two jump tables with targets in
// common) do not all follow from their block counts, so their sites once
// kept their breakpoints (254 traps for init_array alone). Arcs of them
// are now counted in the target: no site keeps a breakpoint for that
// reason, the run traps only at first hits, and the counts are exact (the
// shapes test holds them to gcov's under every engine).
func TestArcsInProcess(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildCFrom(t, filepath.Join(testdataDir, "shapes", "arcs.c"), "-g", "-O0")
	for _, what := range [][]string{{"--lines"}, {"--lines", "--blocks"}} {
		args := append(append([]string{"--engine=jump"}, what...), exe)
		res, p := runProfile(t, runOpts{args: args})
		wantExitCode(t, res, p, 0)
		wantJumped(t, p)
		for m, n := range map[string]int64{"INIT_TEST": 40, "INIT_BODY": 150, "INIT_CLOSE": 150, "SHARED_ZERO": 10, "ONLY_1004": 5, "CLASSIFY_DEFAULT": 10} {
			wantLine(t, p, "arcs.c", markerLineIn(t, filepath.Join(testdataDir, "shapes", "arcs.c"), m), n)
		}
		for _, n := range p.Notes {
			if strings.Contains(n, "edges do not all follow") {
				t.Errorf("%s: %q", res.cmdline, n)
			}
		}
		wantFewTraps(t, res, p, 10)
	}
}

// TestArcsShortO2: at -O2 the test of a call's result is often a block of
// 4 bytes, and two of them to the same two blocks leave an arc free
// (TinyXML-2's XMLNode::ParseDeep, 3.9 million traps on its xmltest, and
// Jim Tcl's JimSearchList). The arc is counted in a short site's
// trampoline, which runs the whole block: no site keeps its breakpoint
// for its edges, the run traps only at first hits, and every line equals
// the xol engine's, gcov's (in pick) and its count by construction.
func TestArcsShortO2(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	src := filepath.Join(testdataDir, "shortarcs.c")
	exe := buildCFrom(t, src, "-g", "-O2")
	for _, what := range [][]string{{"--lines"}, {"--lines", "--blocks"}} {
		var profs []*profile
		var results []result
		for _, e := range []string{"jump", "xol"} {
			r, p := runProfile(t, runOpts{args: append(append([]string{"--engine=" + e, "--funcs", "-o", filepath.Join(t.TempDir(), "out")}, what...), exe)})
			wantExitCode(t, r, p, 0)
			profs, results = append(profs, p), append(results, r)
		}
		jump := profs[0]
		sameEngineCounts(t, jump, profs[1], nil)
		// main's loop is another at -O2 than in gcov's -O0 build.
		first, last := funcLines(t, "shortarcs.c", "pick")
		got := linesOf(jump, "shortarcs.c")
		for l, n := range gcovCounts(t, gcovRun{src: "shortarcs.c"}) {
			if l >= first && l <= last && got[l] != n {
				t.Errorf("%v: shortarcs.c:%d: gcov %d, patchprof %d", what, l, n, got[l])
			}
		}
		for m, n := range map[string]int64{"PICK_TEST": 100, "PICK_ODD": 34, "PICK_BIG": 66, "PICK_R": 100, "PICK_YES": 49, "PICK_NO": 51} {
			wantLine(t, jump, "shortarcs.c", markerLineIn(t, src, m), n)
		}
		for _, n := range jump.Notes {
			if strings.Contains(n, "edges do not all follow") {
				t.Errorf("%v: %q", what, n)
			}
		}
		wantFewTraps(t, results[0], jump, 2)
	}
}

// wantFewTraps checks that a run under the in-process engine trapped about
// once per patched site (its first hit), with at most slack more traps:
// the hits of the few sites that keep a breakpoint.
func wantFewTraps(t *testing.T, res result, p *profile, slack int) {
	t.Helper()
	for _, n := range p.Notes {
		var planned, patched, traps int
		if _, err := fmt.Sscanf(n, "in-process engine: %d sites can count in the target, %d were patched", &planned, &patched); err != nil {
			continue
		}
		i := strings.LastIndex(n, "(")
		if _, err := fmt.Sscanf(n[i:], "(%d traps in all)", &traps); err != nil {
			t.Fatalf("no trap count in %q", n)
		}
		if traps > patched+slack {
			t.Errorf("%s: %d traps for %d patched sites: %q (notes: %q)", res.cmdline, traps, patched, n, p.Notes)
		}
		return
	}
	t.Errorf("%s: no note of the in-process engine in %q", res.cmdline, p.Notes)
}

// TestJumpGoAtomics: the goroutines program's work is a leaf whose entry
// runs on to a LOCK XADD (atomic.Add), which writes the flags: its site
// counts in the target (the flags reading once stopped at the XADD, and
// its 40,000 calls trapped).
func TestJumpGoAtomics(t *testing.T) {
	jumpOnly(t)
	needsGo(t)
	t.Parallel()
	exe := buildGo(t, "goroutines")
	res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--funcs", exe}})
	wantExitCode(t, res, p, 0)
	wantFunc(t, p, "main.work", 40000)
	wantFewTraps(t, res, p, 10)
}

// TestJumpRefusedAtRun: a block the program rewrites before it first runs
// (rewrite.c: popf, which cannot run out of line, where the file has
// nops) is refused when its function is patched, after the trampoline of
// the block before it had its way out aimed at that block's trampoline:
// the way out must go back to the block (settleExits), which keeps its
// breakpoint. Without that the program died of a SIGSEGV in an unwritten
// trampoline at step's fifth call. The counts are known by construction.
func TestJumpRefusedAtRun(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "rewrite.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--lines", "--funcs", exe}})
	wantExitCode(t, res, p, 0)
	if res.stdout != "sum -942\n" {
		t.Errorf("%s: stdout %q, want the native %q", res.cmdline, res.stdout, "sum -942\n")
	}
	for m, n := range map[string]int64{"STEP_IF": 100, "STEP_BODY": 96, "STEP_RETURN": 100} {
		wantLine(t, p, "rewrite.c", markerLine(t, "rewrite.c", m), n)
	}
	wantFunc(t, p, "step", 100)
	found := false
	for _, n := range p.Notes {
		found = found || strings.Contains(n, "at run time: "+"a displaced instruction cannot run out of line")
	}
	if !found {
		t.Errorf("%s: no site refused at run time in %q", res.cmdline, p.Notes)
	}
}

// TestEngineNotesVerbose: the notes of how the in-process engine served
// the run (sites patched, kept as breakpoints) are engine detail: saved
// with the profile always, listed only under -v.
func TestEngineNotesVerbose(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	for _, verbose := range []bool{false, true} {
		args := []string{"--engine=jump", "--lines", exe}
		if verbose {
			args = append([]string{"-v"}, args...)
		}
		res, p := runProfile(t, runOpts{args: args})
		wantExitCode(t, res, p, 0)
		wantJumped(t, p) // the note is in the saved profile
		if listed := strings.Contains(res.stderr, "note: in-process engine: "); listed != verbose {
			t.Errorf("%s: the engine's notes listed: %v, want %v\n%s", res.cmdline, listed, verbose, tail(res.stderr))
		}
	}
}

// TestJumpFuncsSwitch: under --funcs alone no flow graph is planned, yet
// the patch of an entry is checked against its function's graph (no
// branch may land in the bytes it covers). A function with a switch has
// no graph without the file's jump table: dispatch's entry kept its
// breakpoint (SQLite's driver: 36 such functions, 16,833 traps under
// --funcs). With the file's image the graph is whole: the run traps only
// at first hits, and the counts are exact (dispatch 1,000, sink 1,000).
func TestJumpFuncsSwitch(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	for _, opt := range []string{"-O0", "-O2"} {
		exe := buildC(t, "cswitch.c", "-g", opt)
		res, p := runProfile(t, runOpts{args: []string{"--engine=jump", "--funcs", exe}})
		wantExitCode(t, res, p, 0)
		wantFunc(t, p, "dispatch", 1000)
		wantFunc(t, p, "sink", 1000)
		wantJumped(t, p)
		for _, n := range p.Notes {
			if strings.Contains(n, breakpointNoFlow) {
				t.Errorf("%s: %q", opt, n)
			}
		}
		wantFewTraps(t, res, p, 2)
	}
}

// breakpointNoFlow is breakpoint.JumpNoFlow's text, as the notes give it.
const breakpointNoFlow = "its function's flow could not be recovered"
