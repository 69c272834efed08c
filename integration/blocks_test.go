//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The block and edge parts of a saved profile (docs/profile-format.md,
// "blocks").
type blocksProfile struct {
	Branches []struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Address  string `json:"address"`
		Taken    int64  `json:"taken"`
		NotTaken int64  `json:"not_taken"`
	} `json:"branches"`
	Functions []struct {
		Name           string `json:"name"`
		Count          int64  `json:"count"`
		Address        string `json:"address"`
		Blocks         int    `json:"blocks"`
		BlocksExecuted int    `json:"blocks_executed"`
		Edges          int    `json:"edges"`
	} `json:"functions"`
	Sites []struct {
		Address string `json:"address"`
		Count   int64  `json:"count"`
		Kind    string `json:"kind"`
	} `json:"sites"`
	Blocks []struct {
		Address  string `json:"address"`
		End      string `json:"end"`
		Function string `json:"function"`
		Count    int64  `json:"count"`
		Entries  int64  `json:"entries"`
		Module   string `json:"module"`
	} `json:"blocks"`
	Edges []struct {
		From   string `json:"from"`
		To     string `json:"to"`
		Kind   string `json:"kind"`
		Exits  bool   `json:"exits"`
		Count  int64  `json:"count"`
		Module string `json:"module"`
	} `json:"edges"`
	Notes []string `json:"notes"`
}

// runBlocks runs patchprof --blocks --save on exe and returns the run and
// the profile's block parts.
func runBlocks(t *testing.T, exe string, args ...string) (result, *blocksProfile) {
	t.Helper()
	save := filepath.Join(t.TempDir(), "p.json")
	res := run(t, runOpts{args: append([]string{"--blocks", "--save", save, exe}, args...)})
	b, err := os.ReadFile(save)
	if err != nil {
		t.Fatalf("%s: %v\n%s", res.cmdline, err, res)
	}
	var p blocksProfile
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v", res.cmdline, err)
	}
	if len(p.Blocks) == 0 {
		t.Fatalf("%s: no blocks in the profile\n%s", res.cmdline, res)
	}
	return res, &p
}

// checkFlow checks flow conservation on every block of p: its count equals
// the counts of the edges entering it plus its entries (arrivals along no
// edge: only a function's first block has them), and equals the counts of
// the edges leaving it when it has any (a block that returns has none; a
// block that ends in a call has one "return" edge, taken at most as often
// as the block ran: exit, longjmp and exceptions do not return). A
// function entered at its first block's address (C) is also checked against
// its call count; in Go, whose function site is past the stack check, the
// first block's entries are the calls (stack-growth retries arrive along the
// edge back from the morestack call).
func checkFlow(t *testing.T, name string, p *blocksProfile) {
	t.Helper()
	type key struct{ module, addr string }
	in := map[key]int64{}
	out := map[key]int64{}
	hasOut := map[key]bool{}
	call := map[key]bool{}
	for _, e := range p.Edges {
		if !e.Exits {
			in[key{e.Module, e.To}] += e.Count
		}
		out[key{e.Module, e.From}] += e.Count
		hasOut[key{e.Module, e.From}] = true
		call[key{e.Module, e.From}] = e.Kind == "return"
	}
	calls := map[string]int64{}
	for _, f := range p.Functions {
		calls[f.Address] = f.Count
	}
	bad := 0
	for _, b := range p.Blocks {
		k := key{b.Module, b.Address}
		first := b.Address == b.Function
		switch {
		case b.Count != in[k]+b.Entries:
			t.Errorf("%s: block %s (function %s) ran %d times; edges in %d + entries %d", name, b.Address, b.Function, b.Count, in[k], b.Entries)
		case hasOut[k] && !call[k] && b.Count != out[k], call[k] && b.Count < out[k]:
			t.Errorf("%s: block %s (function %s) ran %d times; edges out %d", name, b.Address, b.Function, b.Count, out[k])
		case !first && b.Entries != 0:
			t.Errorf("%s: block %s (function %s): %d arrivals along no edge", name, b.Address, b.Function, b.Entries)
		case first && b.Module == "" && b.Count != calls[b.Function] && b.Entries != calls[b.Function]:
			t.Errorf("%s: first block %s ran %d times with %d entries; the function was called %d times", name, b.Address, b.Count, b.Entries, calls[b.Function])
		default:
			continue
		}
		if bad++; bad > 20 {
			t.Fatalf("%s: too many flow errors", name)
		}
	}
}

// TestBlocksFlow checks flow conservation on the test programs, C at -O0
// and -O2 and Go.
func TestBlocksFlow(t *testing.T) {
	needs(t)
	t.Parallel()
	for _, src := range []string{"shellsort.c", "calls.c", "branches.c", "cswitch.c", "rep.c"} {
		for _, opt := range []string{"-O0", "-O2"} {
			exe := buildC(t, src, "-g", opt)
			res, p := runBlocks(t, exe)
			wantExitCode(t, res, nil, 0)
			checkFlow(t, src+" "+opt, p)
		}
	}
	// Go: one goroutine, and 8 goroutines that the scheduler moves between
	// OS threads: a Go activation follows its goroutine (R14), not the
	// thread it happens to run on.
	for _, prog := range []string{"goswitch", "goroutines"} {
		res, p := runBlocks(t, buildGo(t, prog))
		wantExitCode(t, res, nil, 0)
		checkFlow(t, prog, p)
	}
}

// gcovBranches builds a --coverage copy of testdata/src with opt, runs it
// and returns gcov -b -c's branch counts per line, as a sorted list (a
// branch never executed counts 0). Calls ("call 0 returned") are not
// branches.
func gcovBranches(t *testing.T, src, opt string) map[int][]int64 {
	t.Helper()
	dir := gcovBuildRun(t, src, opt)
	cmd := exec.Command("gcov", "-b", "-c", "-t", src)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gcov -b -c -t %s: %v\n%s", src, err, stderr.String())
	}
	got := map[int][]int64{}
	lineRE := regexp.MustCompile(`^\s*[^:]+:\s*(\d+):`)
	takenRE := regexp.MustCompile(`^branch\s+\d+ taken (\d+)`)
	neverRE := regexp.MustCompile(`^branch\s+\d+ never executed`)
	cur := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if m := lineRE.FindStringSubmatch(l); m != nil {
			cur, _ = strconv.Atoi(m[1])
		} else if m := takenRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			got[cur] = append(got[cur], n)
		} else if neverRE.MatchString(l) {
			got[cur] = append(got[cur], 0)
		}
	}
	for _, v := range got {
		slices.Sort(v)
	}
	return got
}

// branchesOf returns each line of fileBase's branch outcomes, taken and not
// taken together, sorted.
func branchesOf(p *blocksProfile, fileBase string) map[int][]int64 {
	got := map[int][]int64{}
	for _, b := range p.Branches {
		if filepath.Base(b.File) == fileBase {
			got[b.Line] = append(got[b.Line], b.Taken, b.NotTaken)
		}
	}
	for _, v := range got {
		slices.Sort(v)
	}
	return got
}

// gcovBuildRun compiles testdata's src with --coverage at opt in a fresh
// directory, runs it there (writing its .gcda), and returns the directory.
func gcovBuildRun(t *testing.T, src, opt string) string {
	t.Helper()
	mustHaveGcov(t)
	dir := t.TempDir()
	stem := strings.TrimSuffix(src, filepath.Ext(src))
	b, err := os.ReadFile(filepath.Join(testdataDir, src))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, src), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-c", "--coverage", opt, "-g", "-o", stem + ".o", src}, {"--coverage", "-o", stem, stem + ".o"}} {
		cmd := exec.Command("gcc", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	cmd := exec.Command(filepath.Join(dir, stem))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("running the coverage build of %s: %v\n%s", src, err, out)
	}
	return dir
}

// TestBlocksBranchesGcov compares every line's branch outcomes with gcov -b
// (as multisets: gcov numbers a condition's arcs in GCC's order, the machine
// code may invert the jump). branches.c is written so that its branches keep
// their shape at -O2 (see its comment); shellsort.c's loops are rotated at
// -O2, where gcov's instrumented build is a different program, so it is
// compared at -O0 only.
func TestBlocksBranchesGcov(t *testing.T) {
	needs(t)
	mustHaveGcov(t)
	t.Parallel()
	for _, tc := range []struct{ src, opt string }{
		{"branches.c", "-O0"}, {"branches.c", "-O2"}, {"shellsort.c", "-O0"},
	} {
		want := gcovBranches(t, tc.src, tc.opt)
		exe := buildC(t, tc.src, "-g", tc.opt)
		res, p := runBlocks(t, exe)
		wantExitCode(t, res, nil, 0)
		got := branchesOf(p, tc.src)
		if len(want) == 0 {
			t.Fatalf("%s %s: gcov reports no branches", tc.src, tc.opt)
		}
		lines := map[int]bool{}
		for l := range want {
			lines[l] = true
		}
		for l := range got {
			lines[l] = true
		}
		for _, l := range slices.Sorted(mapsKeys(lines)) {
			if !slices.Equal(got[l], want[l]) {
				t.Errorf("%s %s line %d: patchprof's branch counts %v, gcov's %v", tc.src, tc.opt, l, got[l], want[l])
			}
		}
		t.Logf("%s %s: %d lines with branches agree with gcov -b", tc.src, tc.opt, len(lines))
	}
}

func mapsKeys(m map[int]bool) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestBlocksJumpTable checks the block counts of switch statements compiled
// to jump tables, known by construction: ten cases, each run 100 times, in C
// (gcc at -O0 and -O2) and Go.
func TestBlocksJumpTable(t *testing.T) {
	needs(t)
	t.Parallel()
	type prog struct {
		name, exe, dispatch string
	}
	progs := []prog{
		{"goswitch", buildGo(t, "goswitch"), "main.dispatch"},
	}
	for _, opt := range []string{"-O0", "-O2"} {
		progs = append(progs, prog{"cswitch.c " + opt, buildC(t, "cswitch.c", "-g", opt), "dispatch"})
	}
	for _, pr := range progs {
		res, p := runBlocks(t, pr.exe)
		wantExitCode(t, res, nil, 0)
		fn := ""
		for _, f := range p.Functions {
			if f.Name == pr.dispatch {
				fn = f.Address
				if f.Count != 1000 {
					t.Errorf("%s: %s called %d times, want 1000", pr.name, f.Name, f.Count)
				}
			}
		}
		count := map[string]int64{}
		for _, b := range p.Blocks {
			count[b.Address] = b.Count
		}
		inFn := map[string]bool{}
		for _, b := range p.Blocks {
			inFn[b.Address] = b.Function == fn
		}
		var table []string
		for _, e := range p.Edges {
			if e.Kind != "jumptable" || !inFn[e.From] {
				continue
			}
			table = append(table, e.To)
			if e.Count != 100 || count[e.To] != 100 {
				t.Errorf("%s: jump-table edge %s -> %s taken %d times, its target ran %d times; want 100 and 100", pr.name, e.From, e.To, e.Count, count[e.To])
			}
		}
		if len(table) != 10 {
			t.Errorf("%s: %d jump-table edges in %s, want 10 (one per case): %v", pr.name, len(table), pr.dispatch, table)
		}
		checkFlow(t, pr.name, p)
	}
}

// TestBlocksBadCode checks that functions whose flow cannot be recovered get
// a note each and keep their call counts, and that the run goes on.
func TestBlocksBadCode(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "badcode.c", "-g", "-O0")
	native, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatalf("native run: %v", err)
	}
	res, p := runBlocks(t, exe)
	wantExitCode(t, res, nil, 0)
	if res.stdout != string(native) {
		t.Errorf("target's stdout %q, natively %q", res.stdout, native)
	}
	for name, reason := range map[string]string{
		"withdata":  "data in text",
		"midinsn":   "middle of an instruction",
		"truncated": "ends mid-instruction",
	} {
		found := false
		for _, n := range p.Notes {
			if strings.Contains(n, "no block counts for "+name+":") && strings.Contains(n, reason) {
				found = true
			}
		}
		if !found {
			t.Errorf("no note on %s (%s) in %q", name, reason, p.Notes)
		}
		for _, f := range p.Functions {
			if f.Name == name && (f.Count != 3 || f.Blocks != 0) {
				t.Errorf("%s: called %d times with %d blocks, want 3 calls and no blocks", name, f.Count, f.Blocks)
			}
		}
	}
	loop := markerLine(t, "badcode.c", "BAD_LOOP")
	got := branchesOf(p, "badcode.c")
	if want := []int64{1, 3}; !slices.Equal(got[loop], want) {
		t.Errorf("badcode.c:%d branch counts %v, want %v", loop, got[loop], want)
	}
	checkFlow(t, "badcode.c", p)
}

// TestBlocksDisasm checks --disasm's annotated disassembly of a switch: the
// function's header with its calls, its source lines, and the ten jump-table
// edges with their counts beside the indirect jump.
func TestBlocksDisasm(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "cswitch.c", "-g", "-O0")
	res := run(t, runOpts{args: []string{"--disasm", "^dispatch$", exe}})
	wantExitCode(t, res, nil, 0)
	out := res.stderr
	if !strings.Contains(out, "DISASSEMBLY OF dispatch (called 1000 times)") {
		t.Fatalf("no disassembly of dispatch:\n%s", tail(out))
	}
	if !strings.Contains(out, "switch (i % 10) {") {
		t.Errorf("the switch's source line is not shown:\n%s", tail(out))
	}
	if n := len(regexp.MustCompile(`jumptable 0x[0-9a-f]+ 100\b`).FindAllString(out, -1)); n != 10 {
		t.Errorf("%d jump-table edges taken 100 times in the disassembly, want 10:\n%s", n, tail(out))
	}
	if strings.Contains(out, "DISASSEMBLY OF main") {
		t.Errorf("--disasm ^dispatch$ also disassembled main")
	}
}

// TestBlocksCoberturaConditions checks the branch data of the Cobertura
// export against gcov -b on the same source: each line's
// condition-coverage "P% (covered/valid)" counts the branch outcomes gcov
// reports for the line (valid) and those that happened (covered), as gcovr
// writes it from gcov's data.
func TestBlocksCoberturaConditions(t *testing.T) {
	needs(t)
	mustHaveGcov(t)
	t.Parallel()
	condRE := regexp.MustCompile(`<line number="(\d+)" hits="\d+" branch="true" condition-coverage="(\d+)% \((\d+)/(\d+)\)"`)
	for _, tc := range []struct{ src, opt string }{{"branches.c", "-O0"}, {"branches.c", "-O2"}} {
		want := gcovBranches(t, tc.src, tc.opt)
		exe := buildC(t, tc.src, "-g", tc.opt)
		out := filepath.Join(t.TempDir(), "cov.xml")
		res := run(t, runOpts{args: []string{"--lines", "--blocks", "--format", "cobertura", "-o", out, exe}})
		if res.code != 0 {
			t.Fatalf("%s\n%s", res.cmdline, res)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		// The class's own <lines> come last; methods repeat them.
		got := map[int][2]int{}
		for _, m := range condRE.FindAllStringSubmatch(string(b), -1) {
			line, _ := strconv.Atoi(m[1])
			pct, _ := strconv.Atoi(m[2])
			c, _ := strconv.Atoi(m[3])
			v, _ := strconv.Atoi(m[4])
			if pct != c*100/v {
				t.Errorf("line %d: condition-coverage %s%% for %d/%d", line, m[2], c, v)
			}
			got[line] = [2]int{c, v}
		}
		for l, counts := range want {
			c := 0
			for _, n := range counts {
				if n > 0 {
					c++
				}
			}
			if g := got[l]; g != [2]int{c, len(counts)} {
				t.Errorf("%s %s line %d: condition-coverage %d/%d, gcov -b has %d of %d outcomes taken", tc.src, tc.opt, l, g[0], g[1], c, len(counts))
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s %s: %d lines with branches in the export, gcov -b has %d", tc.src, tc.opt, len(got), len(want))
		}
	}
}
