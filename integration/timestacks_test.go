//go:build linux

package integration

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pp "github.com/patchprof/patchprof/profile"
)

// TestTimeStacks checks the sampled call chains of --time where the code
// has no call frame information (testdata/stacks.c built with frame
// pointers and without unwind tables: main calls middle, middle calls
// work, a leaf without a frame), which the kernel's frame-pointer chain
// serves: every sample has one chain, every chain sampled in work goes on
// through middle to main (the frame-pointer chain alone would skip
// middle: the word at the stack pointer gives it), and go tool pprof -top
// -cum reads inclusive time from them.
func TestTimeStacks(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "stacks.c", "-g", "-O1", "-fno-omit-frame-pointer", "-fno-asynchronous-unwind-tables")
	stacksCFI(t, exe, "jump", "work", "work middle main", nil)
}

// TestTimeStacksCFI checks the chains walked by call frame information on
// code that keeps no frame pointers (testdata/cfistacks.c, -O2: main calls
// outer, outer middle, middle work, each moving its stack pointer), under
// every engine: every chain sampled in work is work, middle, outer, main,
// _start (through the C library's start-up code, which is not counted),
// and go tool pprof -top -cum gives each caller at least work's time. By
// frame pointers alone the kernel finds none of the three callers. Then a
// comparator that spins, called by the C library's qsort from sorter: the
// C library's own CFI leads back to sorter and main. callgrind_annotate
// --inclusive=yes reads the same inclusive time from the callgrind
// export's calls (each arc charged the time sampled under it). Then, under
// the jump engine, a tiny function called through a pointer, most of
// whose samples fall in its trampoline's entry check: the walk starts
// above the check's pushes, so every chain is tiny, looper, main. Then
// the C library's random_r called in a loop: its samples, outside the
// counted code, keep a frame in libc.so.6 named by the library's dynamic
// symbols and their chain through roller (the library's CFI again), so
// roller's inclusive time holds them; and its PLT stub, named as perf
// names it, whose chain the linker's CFA expression for the PLT gives.
func TestTimeStacksCFI(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "cfistacks.c", "-g", "-O2", "-fomit-frame-pointer")
	for _, c := range []struct {
		name, leaf, want string
		args             []string
	}{
		{"calls", "work", "work middle outer main _start", []string{"10000000"}},
		{"qsort", "cmp", "cmp sorter main _start", []string{"10000000", "qsort"}},
		{"pointer", "tiny", "tiny looper main _start", []string{"30000000", "pointer"}},
		{"library", "random_r", "random_r roller main _start", []string{"100000000", "library"}},
		{"plt", "random_r@plt", "random_r@plt roller main _start", []string{"100000000", "library"}},
	} {
		for _, engine := range engineList() {
			if c.name == "pointer" && engine != "jump" {
				continue // an entry check is the jump engine's; the others trap at each call
			}
			t.Run(c.name+"/"+engine, func(t *testing.T) {
				t.Parallel()
				stacksCFI(t, exe, engine, c.leaf, c.want, c.args)
			})
		}
	}
}

// stacksCFI runs exe with args under engine with --funcs --time (and
// --calls under jump) and checks that every chain sampled in function
// leaf is want (its frames' functions, innermost first), and that go tool
// pprof -top -cum (and callgrind_annotate --inclusive=yes under jump)
// give each caller at least the leaf's flat time.
func stacksCFI(t *testing.T, exe, engine, leaf, want string, args []string) {
	t.Helper()
	dir := t.TempDir()
	save := filepath.Join(dir, "p.json")
	// The arcs (--calls) under the default engine only: the trap
	// engines trap at blocks of the spinning loops then.
	flags := []string{"--engine=" + engine, "--funcs", "--time", "--save", save}
	if engine == "jump" {
		flags = append(flags, "--calls")
	}
	res := run(t, runOpts{args: append(append(flags, exe), args...)})
	mustSampleTime(t, res)
	if res.code != 0 {
		t.Fatalf("exit code %d\n%s", res.code, res)
	}
	p, err := pp.Load(save)
	if err != nil {
		t.Fatal(err)
	}
	var inSamples, inStacks, inLeaf uint64
	for _, s := range p.Samples {
		inSamples += s.Samples
	}
	outside := false
	for _, s := range p.Stacks {
		if !s.Frames[0].Outside {
			inStacks += s.Samples
		}
		if s.Frames[0].Function != leaf {
			continue
		}
		inLeaf += s.Samples
		if outside = s.Frames[0].Outside; outside && !strings.HasSuffix(s.Frames[0].Module, "/libc.so.6") {
			t.Errorf("%d samples in %s outside the counted code, in %q; want libc.so.6", s.Samples, leaf, s.Frames[0].Module)
		}
		var names []string
		for _, f := range s.Frames {
			names = append(names, f.Function)
		}
		if got := strings.Join(names, " "); got != want {
			t.Errorf("%d samples in %s with the chain %q; want %q", s.Samples, leaf, got, want)
		}
	}
	if inStacks != inSamples || inLeaf == 0 {
		t.Fatalf("%d samples in chains sampled in counted code, %d at sampled addresses, %d in %s; want the same, and some in %s", inStacks, inSamples, inLeaf, leaf, leaf)
	}
	if outside && inLeaf > p.Time.Outside {
		t.Errorf("%d samples in %s, outside the counted code, but %d outside in all", inLeaf, leaf, p.Time.Outside)
	}
	out := filepath.Join(dir, "p.pb.gz")
	if r := run(t, runOpts{args: []string{"report", "--format", "pprof", "-o", out, save}}); r.code != 0 {
		t.Fatalf("exit code %d\n%s", r.code, r)
	}
	text, err := exec.Command("go", "tool", "pprof", "-sample_index=cpu", "-top", "-cum", "-unit=ns", "-nodefraction=0", out).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top -cum: %v\n%s", err, text)
	}
	flat, cum := map[string]uint64{}, map[string]uint64{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)ns\s+\S+%\s+(\S+)$`).FindAllSubmatch(text, -1) {
		f, _ := strconv.ParseUint(string(m[1]), 10, 64)
		c, _ := strconv.ParseUint(string(m[2]), 10, 64)
		flat[string(m[3])], cum[string(m[3])] = f, c
	}
	if flat[leaf] == 0 {
		t.Errorf("go tool pprof -top -cum: no flat time in %s\n%s", leaf, text)
	}
	for _, caller := range strings.Fields(want)[1:] {
		if cum[caller] < flat[leaf] {
			t.Errorf("go tool pprof -top -cum: %s %d ns cum, less than %s's %d ns flat\n%s", caller, cum[caller], leaf, flat[leaf], text)
		}
	}
	if engine == "jump" {
		counted := false
		for _, f := range p.Functions {
			counted = counted || f.Name == leaf
		}
		checkCallgrindInclusive(t, save, leaf, counted, strings.Fields(want)[1:], flat[leaf])
	}
}

// checkCallgrindInclusive writes the saved profile as a callgrind file and
// checks that callgrind_annotate --inclusive=yes gives each of callers
// (but _start, whose call the C library makes) at least leafNS of
// inclusive time, and leaf itself at least that when it is counted
// (withLeaf; a function outside has no cost lines of its own).
func checkCallgrindInclusive(t *testing.T, save, leaf string, withLeaf bool, callers []string, leafNS uint64) {
	t.Helper()
	mustHaveTool(t, "callgrind_annotate", "reads the callgrind export")
	out := filepath.Join(filepath.Dir(save), "callgrind.out")
	if r := run(t, runOpts{args: []string{"report", "--format", "callgrind", "-o", out, save}}); r.code != 0 {
		t.Fatalf("exit code %d\n%s", r.code, r)
	}
	text, err := exec.Command("callgrind_annotate", "--inclusive=yes", "--threshold=100", out).Output()
	if err != nil {
		t.Fatalf("callgrind_annotate --inclusive=yes: %v\n%s", err, text)
	}
	incl := map[string]uint64{}
	for _, m := range regexp.MustCompile(`(?m)^\s*[\d,]+(?: \([^)]*\))?\s+([\d,]+)(?: \([^)]*\))?\s+\S*?:(\w+) \[`).FindAllSubmatch(text, -1) {
		n, _ := strconv.ParseUint(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
		incl[string(m[2])] = max(incl[string(m[2])], n)
	}
	fns := callers
	if withLeaf {
		fns = append([]string{leaf}, callers...)
	}
	for _, fn := range fns {
		if fn != "_start" && incl[fn] < leafNS {
			t.Errorf("callgrind_annotate --inclusive=yes: %s %d ns, less than %s's %d ns flat\n%s", fn, incl[fn], leaf, leafNS, text)
		}
	}
}
