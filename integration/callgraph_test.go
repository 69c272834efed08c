//go:build linux

package integration

import (
	"bufio"
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

// buildCallgraph builds the callgraph target into a directory of its own:
// main, linked against libcg.so (found through its rpath). It returns the
// directory.
func buildCallgraph(t *testing.T, flags ...string) string {
	t.Helper()
	mustHaveCC(t)
	dir := t.TempDir()
	src := filepath.Join(testdataDir, "callgraph")
	for _, args := range [][]string{
		append(append([]string{}, flags...), "-shared", "-fPIC", "-o", "libcg.so", filepath.Join(src, "lib.c")),
		append(append([]string{}, flags...), "-o", "main", filepath.Join(src, "main.c"), "-L.", "-lcg", "-Wl,-rpath,$ORIGIN"),
	} {
		cmd := exec.Command("gcc", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// An arcPair is a caller and a callee by name, and how the call is made.
type arcPair struct{ caller, callee, kind string }

// arcSums sums p's arcs by caller, callee and kind; callees outside the
// counted modules are named "name (outside)".
func arcSums(p *pp.Profile) map[arcPair]uint64 {
	out := map[arcPair]uint64{}
	for _, a := range p.Arcs {
		callee := a.Callee
		if a.Outside {
			callee += " (outside)"
		}
		out[arcPair{a.Caller, callee, a.Kind}] += a.Count
	}
	return out
}

// cmpCallsRE is the target's own count of its qsort comparator's calls.
var cmpCallsRE = regexp.MustCompile(`sum \d+ cmp (\d+)`)

// runCallgraph runs the callgraph target of dir under patchprof --calls and
// returns the run and the profile it saved.
func runCallgraph(t *testing.T, dir string, flags ...string) (result, *pp.Profile, uint64) {
	t.Helper()
	save := filepath.Join(dir, "p.json")
	args := append(append([]string{"--save", save}, flags...), filepath.Join(dir, "main"))
	res := run(t, runOpts{args: args})
	if res.code != 0 {
		t.Fatalf("exit code %d, want 0\n%s", res.code, res)
	}
	m := cmpCallsRE.FindStringSubmatch(res.stdout)
	if m == nil || !strings.HasPrefix(res.stdout, "callgraph\n") {
		t.Fatalf("target's stdout %q, want \"callgraph\" then its sum and comparator calls", res.stdout)
	}
	cmpCalls, _ := strconv.ParseUint(m[1], 10, 64)
	p, err := pp.Load(save)
	if err != nil {
		t.Fatalf("%s: %v", res.cmdline, err)
	}
	return res, p, cmpCalls
}

// TestCallGraph checks the arcs of a program whose calls are known by
// construction: leaf called 3 and 5 times from two sites of main and
// twice by tailer (a call at -O0, a jmp at -O2), rec 1 time from main and
// 9 from itself (at -O0; GCC -O2 makes the recursion a loop), viaptr 7
// times through a pointer (seen entered from the pointer's site, under
// every engine), a library function through the PLT 4 times, which
// calls another through its own PLT 8 times, the C library 3 times, and
// a qsort comparator called from the C library, directly and through a
// pointer, as often as it counts itself, never from the pointer's site.
//
// With -fno-plt the calls into libraries read their GOT slots (`call
// *foo@GOTPCREL(%rip)`) instead of calling PLT stubs: the same arcs,
// bound to their callees by the slots' names.
func TestCallGraph(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2", "-O2 -fno-plt"} {
		t.Run(opt, func(t *testing.T) {
			needs(t)
			t.Parallel()
			dir := buildCallgraph(t, append([]string{"-g"}, strings.Fields(opt)...)...)
			_, p, cmpCalls := runCallgraph(t, dir, "--calls")
			got := arcSums(p)
			tailKind := pp.ArcDirect
			if opt != "-O0" {
				tailKind = pp.ArcTail
			}
			want := map[arcPair]uint64{
				{"main", "leaf", pp.ArcDirect}:               8,
				{"main", "", pp.ArcIndirect}:                 1, // sorter's call never has a known callee
				{"main", "viaptr", pp.ArcIndirect}:           7,
				{"main", "cmp", pp.ArcIndirect}:              0, // qsort called it, deeper
				{"", "viaptr", pp.ArcUnknown}:                0,
				{"main", "rec", pp.ArcDirect}:                1,
				{"main", "lib_twice", pp.ArcPLT}:             4,
				{"lib_twice", "lib_helper", pp.ArcPLT}:       8,
				{"main", "tailer", pp.ArcDirect}:             2,
				{"tailer", "leaf", tailKind}:                 2,
				{"main", "qsort (outside)", pp.ArcPLT}:       1,
				{"main", "puts (outside)", pp.ArcPLT}:        1,
				{"main", "printf (outside)", pp.ArcPLT}:      1,
				{"", "cmp", pp.ArcUnknown}:                   cmpCalls,
				{"", "main", pp.ArcUnknown}:                  1,
				{"rec", "rec", pp.ArcDirect}:                 9,
				{"", "leaf", pp.ArcUnknown}:                  0, // every call of leaf is on a counted site
				{"", "lib_helper", pp.ArcUnknown}:            0,
				{"", "lib_twice", pp.ArcUnknown}:             0,
				{"", "tailer", pp.ArcUnknown}:                0,
				{"", "rec", pp.ArcUnknown}:                   0,
				{"main", "viaptr", pp.ArcDirect}:             0, // never guessed
				{"tailer", "leaf", otherKind(tailKind)}:      0,
				{"lib_twice", "lib_helper (outside)", "plt"}: 0,
			}
			if opt != "-O0" {
				delete(want, arcPair{"rec", "rec", pp.ArcDirect})
			}
			if cmpCalls == 0 {
				t.Fatalf("the comparator counted no calls")
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("arcs %s -> %s (%s): %d calls, want %d", k.caller, k.callee, k.kind, got[k], n)
				}
			}
			for _, a := range p.Arcs {
				if a.Callee == "lib_twice" || a.Callee == "lib_helper" {
					if filepath.Base(a.CalleeModule) != "libcg.so" || a.CalleeAddress == 0 {
						t.Errorf("arc %+v: want its callee in libcg.so, with its address", a)
					}
				}
				if a.Caller == "lib_twice" && filepath.Base(a.Module) != "libcg.so" {
					t.Errorf("arc %+v: want its site in libcg.so", a)
				}
			}
			if opt == "-O0" {
				checkCallSites(t, p)
			}
		})
	}
}

func otherKind(k string) string {
	if k == pp.ArcTail {
		return pp.ArcDirect
	}
	return pp.ArcTail
}

// checkCallSites checks the -O0 arcs per call site: each marked line's
// call instruction, with its callee and count.
func checkCallSites(t *testing.T, p *pp.Profile) {
	t.Helper()
	src := filepath.Join(testdataDir, "callgraph", "main.c")
	for _, tc := range []struct {
		marker, caller, callee string
		count                  uint64
	}{
		{"site:leaf3", "main", "leaf", 3},
		{"site:leaf5", "main", "leaf", 5},
		{"site:ptr", "main", "viaptr", 7},
		{"site:sorter", "main", "", 1},
		{"site:rec1", "main", "rec", 1},
		{"site:rec", "rec", "rec", 9},
		{"site:lib", "main", "lib_twice", 4},
		{"site:tail", "tailer", "leaf", 2},
		{"site:tailer", "main", "tailer", 2},
		{"site:puts", "main", "puts", 1},
	} {
		line := markerLineIn(t, src, tc.marker)
		var found []pp.Arc
		for _, a := range p.Arcs {
			if a.Line == line && a.File == src {
				found = append(found, a)
			}
		}
		if len(found) != 1 || found[0].Caller != tc.caller || found[0].Callee != tc.callee || found[0].Count != tc.count {
			t.Errorf("main.c:%d (%s): arcs %+v, want one from %s to %q, %d calls", line, tc.marker, found, tc.caller, tc.callee, tc.count)
		}
	}
}

// programFuncs are the functions of the callgraph target, in main and
// libcg.so: the arcs compared with callgrind's are those between them.
var programFuncs = map[string]bool{
	"main": true, "leaf": true, "rec": true, "viaptr": true, "tailer": true, "cmp": true, "lib_twice": true, "lib_helper": true,
}

// TestCallGraphCallgrind compares the arcs with callgrind's calls= counts
// on the same binaries (callgrind counts every call, through pointers and
// jumps too): equal for every pair of the program's functions, the call
// through a pointer included. Then callgrind_annotate reads --format
// callgrind, and go tool pprof -peek shows the callers from --format
// pprof.
func TestCallGraphCallgrind(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			needs(t)
			mustHaveTool(t, "valgrind", "the oracle")
			mustHaveTool(t, "callgrind_annotate", "reads the callgrind export")
			t.Parallel()
			dir := buildCallgraph(t, "-g", opt)
			_, p, _ := runCallgraph(t, dir, "--calls")
			cgOut := filepath.Join(dir, "callgrind.out.valgrind")
			cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+cgOut, filepath.Join(dir, "main"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("valgrind: %v\n%s", err, out)
			}
			theirs := callgrindCalls(t, cgOut)
			ours := map[[2]string]uint64{}
			for _, a := range p.Arcs {
				if programFuncs[a.Caller] && programFuncs[a.Callee] {
					ours[[2]string{a.Caller, a.Callee}] += a.Count
				}
			}
			indirect := [2]string{"main", "viaptr"}
			for k, n := range theirs {
				if !programFuncs[k[0]] || !programFuncs[k[1]] {
					continue
				}
				if ours[k] != n {
					t.Errorf("%s -> %s: %d calls, callgrind %d", k[0], k[1], ours[k], n)
				}
			}
			for k, n := range ours {
				if _, ok := theirs[k]; !ok && n > 0 {
					t.Errorf("%s -> %s: %d calls, callgrind none", k[0], k[1], n)
				}
			}
			if theirs[indirect] != 7 || ours[indirect] != 7 {
				t.Errorf("main -> viaptr: callgrind %d, patchprof %d; want 7 and 7", theirs[indirect], ours[indirect])
			}
			checkCallgrindAnnotate(t, dir, opt)
			checkPprofPeek(t, dir)
		})
	}
}

// mustHaveTool skips the test when tool is not installed.
func mustHaveTool(t *testing.T, tool, why string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s not found in PATH (%v): it %s", tool, err, why)
	}
}

// callgrindCalls sums the calls= lines of a callgrind.out file by caller
// and callee (fn= and cfn=, name compression undone, callgrind's
// recursion levels "f'2" folded into f).
func callgrindCalls(t *testing.T, path string) map[[2]string]uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]string{}
	name := func(v string) string {
		if id, rest, ok := strings.Cut(v, ")"); ok && strings.HasPrefix(id, "(") {
			if rest = strings.TrimSpace(rest); rest != "" {
				names[id] = rest
			}
			v = names[id]
		}
		base, _, _ := strings.Cut(v, "'")
		return base
	}
	out := map[[2]string]uint64{}
	var fn, cfn string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "fn="):
			fn = name(l[3:])
		case strings.HasPrefix(l, "cfn="):
			cfn = name(l[4:])
		case strings.HasPrefix(l, "calls="):
			n, err := strconv.ParseUint(strings.Fields(l[6:])[0], 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, l, err)
			}
			out[[2]string{fn, cfn}] += n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCallgrindAnnotate writes the saved profile of dir as a callgrind
// file and checks that callgrind_annotate reads it and shows the calls.
func checkCallgrindAnnotate(t *testing.T, dir, opt string) {
	t.Helper()
	out := filepath.Join(dir, "callgrind.out.patchprof")
	if res := run(t, runOpts{args: []string{"report", "--format", "callgrind", "-o", out, filepath.Join(dir, "p.json")}}); res.code != 0 {
		t.Fatalf("exit code %d\n%s", res.code, res)
	}
	cmd := exec.Command("callgrind_annotate", "--tree=calling", out)
	text, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(text), "WARNING") {
		t.Fatalf("callgrind_annotate %s: %v\n%s", out, err, text)
	}
	want := []string{`main.c:leaf \(8x\)`, `lib.c:lib_helper \(8x\)`, `main.c:lib_twice \(4x\)|lib.c:lib_twice \(4x\)`, `main.c:leaf \(2x\)`}
	if opt == "-O0" {
		want = append(want, `main.c:rec \(9x\)`)
	}
	for _, w := range want {
		if !regexp.MustCompile(`(?m)>\s+\S*` + w).Match(text) {
			t.Errorf("callgrind_annotate --tree=calling shows no call %s:\n%s", w, text)
		}
	}
	if !regexp.MustCompile(`(?m)^\s*\S+ \(100.0%\)\s+PROGRAM TOTALS`).Match(text) {
		t.Errorf("callgrind_annotate shows no program total:\n%s", text)
	}
}

// checkPprofPeek writes the saved profile of dir as pprof and checks that
// go tool pprof -peek lists leaf's callers with their calls.
func checkPprofPeek(t *testing.T, dir string) {
	t.Helper()
	out := filepath.Join(dir, "calls.pb.gz")
	if res := run(t, runOpts{args: []string{"report", "--format", "pprof", "-o", out, filepath.Join(dir, "p.json")}}); res.code != 0 {
		t.Fatalf("exit code %d\n%s", res.code, res)
	}
	cmd := exec.Command("go", "tool", "pprof", "-peek", "^leaf$", "-nodefraction=0", out)
	text, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -peek: %v\n%s", err, text)
	}
	for _, w := range []struct {
		caller string
		calls  int
	}{{"main", 8}, {"tailer", 2}} {
		re := regexp.MustCompile(fmt.Sprintf(`(?m)^\s+%d\s+\S+%%\s+\|\s+%s$`, w.calls, w.caller))
		if !re.Match(text) {
			t.Errorf("go tool pprof -peek ^leaf$ does not show %d calls from %s:\n%s", w.calls, w.caller, text)
		}
	}
}
