//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pp "github.com/patchprof/patchprof/profile"
)

// indirectWant returns the arcs an indirect call site of caller makes,
// whose callees entered it calls times each: the callees at the site,
// under every engine, and none unknown.
func indirectWant(caller string, calls map[string]uint64) map[arcPair]uint64 {
	want := map[arcPair]uint64{}
	for callee, n := range calls {
		want[arcPair{caller, callee, pp.ArcIndirect}] = n
		want[arcPair{"", callee, pp.ArcUnknown}] = 0
		want[arcPair{caller, callee, pp.ArcDirect}] = 0 // never guessed
	}
	want[arcPair{caller, "", pp.ArcIndirect}] = 0
	return want
}

// runArcs runs exe under patchprof --calls (and flags) and returns the
// arcs of the profile it saved, summed (arcSums), and the profile.
func runArcs(t *testing.T, exe, stdout string, flags ...string) (map[arcPair]uint64, *pp.Profile) {
	t.Helper()
	save := filepath.Join(t.TempDir(), "p.json")
	res := run(t, runOpts{args: append(append([]string{"--calls", "--save", save}, flags...), exe)})
	if res.code != 0 || !strings.HasPrefix(res.stdout, stdout) {
		t.Fatalf("exit code %d, stdout %q; want 0 and %q first\n%s", res.code, res.stdout, stdout, res)
	}
	p, err := pp.Load(save)
	if err != nil {
		t.Fatalf("%s: %v", res.cmdline, err)
	}
	return arcSums(p), p
}

// checkArcs compares the arcs got with want, and the lines of the arcs
// from caller's indirect call site with the line marked marker in src.
func checkArcs(t *testing.T, got map[arcPair]uint64, want map[arcPair]uint64, p *pp.Profile, src, marker, caller string) {
	t.Helper()
	for k, n := range want {
		if got[k] != n {
			t.Errorf("arcs %s -> %s (%s): %d calls, want %d", k.caller, k.callee, k.kind, got[k], n)
		}
	}
	line := markerLineIn(t, src, marker)
	sites := 0
	for _, a := range p.Arcs {
		if a.Caller == caller && a.Kind == pp.ArcIndirect && a.Count > 0 {
			sites++
			if a.File != src || a.Line != line {
				t.Errorf("arc %+v: want its site at %s:%d (%s)", a, src, line, marker)
			}
		}
	}
	if sites == 0 {
		t.Errorf("no indirect arc from %s", caller)
	}
}

// TestCallGraphVirtual checks a C++ virtual call by construction: one
// site, run 7 times, enters Square::area 3 times and Circle::area 4
// times.
func TestCallGraphVirtual(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			needs(t)
			t.Parallel()
			src := filepath.Join(testdataDir, "callgraph", "virtual.cpp")
			got, p := runArcs(t, buildCFrom(t, src, "-g", opt), "virtual ")
			const caller = "_Z5totalPKP5Shapei" // total(Shape* const*, int)
			want := indirectWant(caller, map[string]uint64{"_ZNK6Square4areaEv": 3, "_ZNK6Circle4areaEv": 4})
			want[arcPair{"main", caller, pp.ArcDirect}] = 1
			checkArcs(t, got, want, p, src, "site:virtual", caller)
		})
	}
}

// TestCallGraphGo checks a Go closure and an interface method by
// construction: main.sumAdds calls the closure main.adder.func1 6 times
// through a func value; main.total's interface call site, run 9 times,
// enters the compiler's wrappers main.(*square).Area 4 times and
// main.(*circle).Area 5 times (the methods have value receivers), which
// call the methods directly.
func TestCallGraphGo(t *testing.T) {
	needs(t)
	t.Parallel()
	src := filepath.Join(testdataDir, "gocalls", "main.go")
	got, p := runArcs(t, buildGo(t, "gocalls"), "gocalls ")
	want := indirectWant("main.total", map[string]uint64{"main.(*square).Area": 4, "main.(*circle).Area": 5})
	for k, n := range indirectWant("main.sumAdds", map[string]uint64{"main.adder.func1": 6}) {
		want[k] = n
	}
	for _, m := range []struct {
		typ string
		n   uint64
	}{{"square", 4}, {"circle", 5}} {
		want[arcPair{fmt.Sprintf("main.(*%s).Area", m.typ), fmt.Sprintf("main.%s.Area", m.typ), pp.ArcDirect}] = m.n
		want[arcPair{"", fmt.Sprintf("main.%s.Area", m.typ), pp.ArcUnknown}] = 0
	}
	want[arcPair{"main.main", "main.total", pp.ArcDirect}] = 1
	want[arcPair{"main.main", "main.sumAdds", pp.ArcDirect}] = 1
	checkArcs(t, got, want, p, src, "site:iface", "main.total")
	checkArcs(t, got, map[arcPair]uint64{}, p, src, "site:closure", "main.sumAdds")
}

// TestCallGraphGoPreempted counts the calls of goroutines that Go's
// asynchronous preemption stops between the start of a call's block and
// the call, and may resume on another thread: 8 goroutines (more than the
// CPUs) each call a closure through a func value from one site, N times.
// Every call is the site's, none among the callers unknown. Under the
// in-process engine the call is pending in the thread's slab from the
// block's trampoline to the callee's entry; before the monitor stepped a
// preempted goroutine through its call, a run of 160 million calls lost
// 5 to 7 of them to the unknown callers.
func TestCallGraphGoPreempted(t *testing.T) {
	needs(t)
	t.Parallel()
	// Long enough for hundreds of preemptions (one per 10 ms of a
	// goroutine's run) under the in-process engine; at a trap a call, the
	// trap engines run far fewer.
	n := 20_000_000
	if e := os.Getenv(engineEnv); e != "" && e != "jump" {
		n = 2_000
	}
	src := filepath.Join(testdataDir, "gopreemptcalls", "main.go")
	exe := buildGo(t, "gopreemptcalls")
	save := filepath.Join(t.TempDir(), "p.json")
	res := run(t, runOpts{args: []string{"--calls", "--save", save, exe, strconv.Itoa(n)}})
	if want := fmt.Sprintf("gopreemptcalls %d\n", 8*n); res.code != 0 || res.stdout != want {
		t.Fatalf("exit code %d, stdout %q; want 0 and %q\n%s", res.code, res.stdout, want, res)
	}
	p, err := pp.Load(save)
	if err != nil {
		t.Fatalf("%s: %v", res.cmdline, err)
	}
	got := arcSums(p)
	want := indirectWant("main.spin", map[string]uint64{"main.main.func1": uint64(8 * n)})
	checkArcs(t, got, want, p, src, "site:preempted", "main.spin")
}

// gprofCallerRE matches a caller's line above a function's primary line in
// gprof's call graph: self and children (absent for a recursive call),
// called/total (or called), the caller's name and index.
var gprofCallerRE = regexp.MustCompile(`^\s+(?:[\d.]+\s+[\d.]+\s+)?(\d+)(?:/\d+)?\s+(\S+) \[\d+\]$`)

// gprofPrimaryRE matches a function's primary line: [index], then its
// name and index last.
var gprofPrimaryRE = regexp.MustCompile(`^\[\d+\].*\s(\S+) \[\d+\]$`)

// gprofArcs reads the arcs of gprof -b -q's call graph: for each function,
// the calls of each caller listed above its primary line.
func gprofArcs(t *testing.T, text string) map[[2]string]uint64 {
	t.Helper()
	out := map[[2]string]uint64{}
	for _, entry := range strings.Split(text, "\n-----") {
		var callers [][2]string // name, count
		for _, l := range strings.Split(entry, "\n") {
			if m := gprofPrimaryRE.FindStringSubmatch(l); m != nil {
				for _, c := range callers {
					n, _ := strconv.ParseUint(c[1], 10, 64)
					out[[2]string{c[0], m[1]}] += n
				}
				break
			}
			if m := gprofCallerRE.FindStringSubmatch(l); m != nil {
				callers = append(callers, [2]string{m[2], m[1]})
			}
		}
	}
	return out
}

// TestCallGraphGprof compares the arcs with gprof's call graph on a -pg
// build of the same source (the callgraph target with its library linked
// in, since gprof does not see shared libraries): every arc gprof counts
// between the program's functions, patchprof counts as often from a
// plain build, the call through a pointer included.
func TestCallGraphGprof(t *testing.T) {
	needs(t)
	mustHaveTool(t, "gprof", "the oracle (binutils)")
	t.Parallel()
	srcs := []string{filepath.Join(testdataDir, "callgraph", "main.c"), filepath.Join(testdataDir, "callgraph", "lib.c")}
	pg := buildSources(t, srcs, "-g", "-O0", "-pg")
	dir := t.TempDir()
	cmd := exec.Command(pg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", pg, err, out)
	}
	text, err := exec.Command("gprof", "-b", "-q", pg, filepath.Join(dir, "gmon.out")).CombinedOutput()
	if err != nil {
		t.Fatalf("gprof: %v\n%s", err, text)
	}
	theirs := gprofArcs(t, string(text))
	got, _ := runArcs(t, buildSources(t, srcs, "-g", "-O0"), "callgraph\n")
	ours := map[[2]string]uint64{}
	for k, n := range got {
		if programFuncs[k.caller] && programFuncs[k.callee] {
			ours[[2]string{k.caller, k.callee}] += n
		}
	}
	indirect := [2]string{"main", "viaptr"}
	if theirs[indirect] != 7 || theirs[[2]string{"lib_twice", "lib_helper"}] != 8 || theirs[[2]string{"rec", "rec"}] != 9 {
		t.Fatalf("gprof's arcs %v: want main -> viaptr 7, lib_twice -> lib_helper 8, rec -> rec 9 among them\n%s", theirs, text)
	}
	for k, n := range theirs {
		if !programFuncs[k[0]] || !programFuncs[k[1]] {
			continue
		}
		if ours[k] != n {
			t.Errorf("%s -> %s: %d calls, gprof %d", k[0], k[1], ours[k], n)
		}
	}
	for k, n := range ours {
		if _, ok := theirs[k]; !ok && n > 0 {
			t.Errorf("%s -> %s: %d calls, gprof none", k[0], k[1], n)
		}
	}
}

// TestCallGraphTrapEntry checks an indirect call into a function whose
// entry keeps its breakpoint under the in-process engine (a one-byte
// function with another right after it: no room for a jump): the call's
// block records it in the target and the monitor counts it at the trap,
// 5 calls through one pointer, and 3 through another into a function
// whose entry counts in the target, from another function.
func TestCallGraphTrapEntry(t *testing.T) {
	needs(t)
	t.Parallel()
	src := filepath.Join(testdataDir, "callgraph", "trapentry.c")
	got, p := runArcs(t, buildCFrom(t, src, "-g", "-O0"), "6\n")
	checkArcs(t, got, indirectWant("main", map[string]uint64{"tiny": 5}), p, src, "site:tiny", "main")
	checkArcs(t, got, indirectWant("callvia", map[string]uint64{"callee": 3}), p, src, "site:callee", "callvia")
	if engine := os.Getenv(engineEnv); engine == "" || engine == "jump" {
		kept := false
		for _, n := range p.Notes {
			kept = kept || strings.Contains(n, "keep a breakpoint") && strings.Contains(n, "(5 traps)")
		}
		if !kept {
			t.Errorf("tiny's entry did not trap 5 times: notes %q", p.Notes)
		}
	}
}

// TestCallGraphSignals: a timer's handler interrupts main's loop of
// indirect calls hundreds of times, between any two of its instructions
// (inside an entry's check too), and makes an indirect call of its own.
// Both sites' callees are exact: the call the signal interrupted is
// still pending when the handler returns (the monitor sets it aside for
// the handler), and a thread stopped inside an entry's check counts its
// call once. Under the trap engines, whose every call traps, the loop
// is shorter; under classic a signal also lands in the single-step cycle
// of the callee's entry trap, whose Hit had taken the pending call.
func TestCallGraphSignals(t *testing.T) {
	needs(t)
	t.Parallel()
	n := 20_000_000
	switch os.Getenv(engineEnv) {
	case "classic", "xol":
		n = 20_000
	}
	src := filepath.Join(testdataDir, "callgraph", "callsig.c")
	exe := buildCFrom(t, src, "-g", "-O0")
	save := filepath.Join(t.TempDir(), "p.json")
	res := run(t, runOpts{args: []string{"--calls", "--save", save, exe, strconv.Itoa(n)}})
	var sum, runs uint64
	if _, err := fmt.Sscanf(res.stdout, "%d %d", &sum, &runs); err != nil || res.code != 0 || sum != uint64(n) {
		t.Fatalf("exit code %d, stdout %q: want 0 and %d first\n%s", res.code, res.stdout, n, res)
	}
	p, err := pp.Load(save)
	if err != nil {
		t.Fatal(err)
	}
	got := arcSums(p)
	checkArcs(t, got, indirectWant("main", map[string]uint64{"inc": uint64(n)}), p, src, "site:loop", "main")
	checkArcs(t, got, indirectWant("on_alarm", map[string]uint64{"tick": runs}), p, src, "site:handler", "on_alarm")
	if runs == 0 {
		t.Errorf("the timer's handler never ran: nothing interrupted the loop")
	}
}

// TestCallGraphManyCallers checks by construction a function entered
// through a pointer from eight call sites, in eight callers: caller K
// calls it K times. Each call is seen at its site under every engine
// (the jump engine's entry keeps more callers than these), none unknown.
// Built with SIBLING at -O2, the last call of callers 1 and 2 is a jump
// through a register, a tail call, seen entering hub as the calls are.
func TestCallGraphManyCallers(t *testing.T) {
	wantCallers(t, "callers.c", 8, []string{"-O0", "-O2", "-O2 -DSIBLING"})
}

// TestCallGraphSlotsTaken checks by construction a function entered
// through a pointer from 24 call sites, more than the jump engine's
// entry keeps slots for in a thread (jump.CallSlots): the calls from the
// sites past them are counted by the monitor at the check's int3, each
// at its site, none unknown, as under the other engines.
func TestCallGraphSlotsTaken(t *testing.T) {
	wantCallers(t, "manycallers.c", 24, []string{"-O0", "-O2"})
}

// wantCallers builds callgraph/src, in which callers caller1 to callerN
// call hub through a pointer, caller K K times from its line marked
// site:callerK, at each of opts under every engine, and checks each
// caller's indirect arcs and that none of hub's callers is unknown.
func wantCallers(t *testing.T, src string, n int, opts []string) {
	for _, opt := range opts {
		for _, engine := range engineList() {
			t.Run(opt+"/"+engine, func(t *testing.T) {
				needs(t)
				t.Parallel()
				path := filepath.Join(testdataDir, "callgraph", src)
				exe := buildCFrom(t, path, append([]string{"-g"}, strings.Fields(opt)...)...)
				got, p := runArcs(t, exe, fmt.Sprintf("callers %d\n", n*(n+1)/2), "--engine", engine)
				for k := 1; k <= n; k++ {
					caller := fmt.Sprintf("caller%d", k)
					if c := got[arcPair{caller, "hub", pp.ArcIndirect}]; c != uint64(k) {
						t.Errorf("%s's indirect arcs: %d calls, want %d", caller, c, k)
					}
				}
				if c := got[arcPair{"", "hub", pp.ArcUnknown}]; c != 0 {
					t.Errorf("hub has %d calls from unknown callers, want 0", c)
				}
				for _, a := range p.Arcs {
					if a.Kind != pp.ArcIndirect || a.Caller == "" || a.Count == 0 {
						continue
					}
					if line := markerLineIn(t, path, "site:"+a.Caller); a.File != path || a.Line != line {
						t.Errorf("arc %+v: want its site at %s:%d", a, path, line)
					}
				}
			})
		}
	}
}

// TestCallGraphOutCall checks by construction a caller that calls into
// the C library through a pointer and then a counted function directly,
// at the same stack pointer: the direct calls are direct arcs only, never
// taken for the indirect call's callee (the jump engine's entry check
// compares the return address with the pending call's), under every
// engine.
func TestCallGraphOutCall(t *testing.T) {
	wantArcsEverywhere(t, "outcall.c", "outcall 11\n", map[arcPair]uint64{
		{"caller", "hub", pp.ArcDirect}:   10,
		{"caller", "hub", pp.ArcIndirect}: 0,
		{"main", "hub", pp.ArcIndirect}:   1,
		{"", "hub", pp.ArcUnknown}:        0,
	})
}

// TestCallGraphTailPointer checks by construction functions that leave
// through a pointer: at -O2 relay's `return pick[k](x)` is a jmp through
// memory entering square 3 times and cube 4, and outward's jumps to the
// C library's abs (not counted) 6 times, called 5 times directly from
// one site of main, then once through a pointer. Every engine names
// relay's callees; outward's entries are main's calls only, never its
// own stale jump's callee; nothing is left to unknown callers. At -O0 the same arcs are
// calls. The -O2 arcs are marked as jumps (profile.Arc.Jump).
func TestCallGraphTailPointer(t *testing.T) {
	want := map[arcPair]uint64{
		{"main", "relay", pp.ArcDirect}:        7,
		{"main", "outward", pp.ArcDirect}:      5,
		{"relay", "square", pp.ArcIndirect}:    3,
		{"relay", "cube", pp.ArcIndirect}:      4,
		{"main", "outward", pp.ArcIndirect}:    1,
		{"outward", "", pp.ArcIndirect}:        6,
		{"outward", "outward", pp.ArcIndirect}: 0,
		{"", "square", pp.ArcUnknown}:          0,
		{"", "cube", pp.ArcUnknown}:            0,
		{"", "outward", pp.ArcUnknown}:         0,
		{"", "relay", pp.ArcUnknown}:           0,
	}
	wantArcsEverywhere(t, "tailptr.c", "tailptr 792 19\n", want)
	for _, engine := range engineList() {
		t.Run("jumps/"+engine, func(t *testing.T) {
			needs(t)
			t.Parallel()
			path := filepath.Join(testdataDir, "callgraph", "tailptr.c")
			_, p := runArcs(t, buildCFrom(t, path, "-g", "-O2"), "tailptr 792 19\n", "--engine", engine)
			jumps := 0
			for _, a := range p.Arcs {
				if a.Kind != pp.ArcIndirect || a.Count == 0 {
					continue
				}
				if tail := a.Caller != "main"; a.Jump != tail {
					t.Errorf("arc %+v: Jump %v, want %v (main's is a call, the others' jumps)", a, a.Jump, tail)
				}
				if a.Jump {
					jumps++
				}
			}
			if jumps != 3 {
				t.Errorf("%d tail jumps' arcs, want relay's 2 and outward's 1", jumps)
			}
		})
	}
}

// wantArcsEverywhere builds callgraph/src at -O0 and -O2, runs it under
// every engine (its stdout the native one) and checks the arcs in want.
func wantArcsEverywhere(t *testing.T, src, stdout string, want map[arcPair]uint64) {
	for _, opt := range []string{"-O0", "-O2"} {
		for _, engine := range engineList() {
			t.Run(opt+"/"+engine, func(t *testing.T) {
				needs(t)
				t.Parallel()
				path := filepath.Join(testdataDir, "callgraph", src)
				got, _ := runArcs(t, buildCFrom(t, path, "-g", opt), stdout, "--engine", engine)
				for k, n := range want {
					if got[k] != n {
						t.Errorf("arcs %s -> %s (%s): %d calls, want %d", k.caller, k.callee, k.kind, got[k], n)
					}
				}
			})
		}
	}
}

// TestCallGraphWideEntry checks by construction the callers of a function
// entered only through a pointer whose first block is long: under the jump
// engine that block runs whole in the entry's trampoline after the entry
// check, and both must fit (with less room the check was dropped, and
// every call went to "callers unknown"). Every engine must give 7 calls
// from one site and 5 from the other.
func TestCallGraphWideEntry(t *testing.T) {
	wantArcsEverywhere(t, "wideentry.c", "wideentry 181\n", map[arcPair]uint64{
		{"seven", "wide", pp.ArcIndirect}: 7,
		{"five", "wide", pp.ArcIndirect}:  5,
		{"", "wide", pp.ArcUnknown}:       0,
	})
}
