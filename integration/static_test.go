//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// allEngines are the engines a test compares with one another.
var allEngines = []string{"jump", "xol", "classic"}

// TestStaticGlibc runs statically linked C and C++ programs, whose C
// library picks its string functions by CPU (IFUNC: AVX-512, EVEX, AVX2 or
// SSE2 forms, where __mempcpy_* jump one instruction into __memcpy_*),
// under every engine with --funcs and with --lines: each run prints what
// the program prints natively and exits as it does, and every function and
// line count is the same under every engine.
func TestStaticGlibc(t *testing.T) {
	needs(t)
	if os.Getenv(engineEnv) != "" {
		t.Skipf("compares the engines itself; this is the run under %s=%s", engineEnv, os.Getenv(engineEnv))
	}
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libc.a"); err != nil {
		t.Skip("no static C library (/usr/lib/x86_64-linux-gnu/libc.a): apt-get install libc6-dev")
	}
	t.Parallel()
	for _, src := range []string{"static/cstatic.c", "static/cxxstatic.cc"} {
		mustHaveCompiler(t, src)
		exe := buildC(t, src, "-static", "-g", "-O0")
		// --lines on the program's own file: the static C++ library has
		// line information too, whose every line the trap engines would
		// serve by a stop.
		for _, mode := range []string{"--funcs", "--lines --file " + filepath.Base(src)} {
			t.Run(filepath.Base(src)+strings.Fields(mode)[0], func(t *testing.T) {
				sameUnderEngines(t, exe, strings.Fields(mode), []string{"a", "b"})
			})
		}
	}
}

// TestMidFunctionJump is glibc's shape in assembly, so that it does not
// depend on the CPU: f2 jumps one instruction into f1, f3 reaches a label
// of its own only through a table in data. Under every engine, PIE and
// not, the program exits as natively and each function counts 3.
func TestMidFunctionJump(t *testing.T) {
	needs(t)
	if os.Getenv(engineEnv) != "" {
		t.Skipf("compares the engines itself; this is the run under %s=%s", engineEnv, os.Getenv(engineEnv))
	}
	t.Parallel()
	for _, pie := range []string{"-no-pie", "-pie"} {
		exe := buildC(t, "static/midjump.s", pie)
		t.Run(pie, func(t *testing.T) {
			for _, p := range sameUnderEngines(t, exe, []string{"--funcs"}, nil) {
				for _, f := range []string{"f1", "f2", "f3"} {
					wantFunc(t, p, f, 3)
				}
				wantFunc(t, p, "main", 1)
			}
		})
	}
}

// sameUnderEngines runs exe natively and under each engine with flags,
// requires the same output and exit status as natively and the same
// function and line counts under every engine, and returns the profiles.
func sameUnderEngines(t *testing.T, exe string, flags, args []string) []*profile {
	t.Helper()
	native := exec.Command(exe, args...)
	out, err := native.Output()
	code := native.ProcessState.ExitCode()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%s natively: %v", exe, err)
	}
	var profs []*profile
	for _, e := range allEngines {
		o := filepath.Join(t.TempDir(), "report.txt")
		a := append(append([]string{"--engine", e, "-o", o}, flags...), exe)
		res, p := runProfile(t, runOpts{args: append(a, args...)})
		if res.stdout != string(out) {
			t.Errorf("--engine %s %v: the program printed\n%s\nnatively\n%s", e, flags, tail(res.stdout), tail(string(out)))
		}
		if res.code != code {
			t.Errorf("--engine %s %v: exit code %d, natively %d\n%s", e, flags, res.code, code, res)
		}
		wantExitCode(t, res, p, code)
		profs = append(profs, p)
	}
	if t.Failed() {
		return profs
	}
	first := profs[0]
	for k, p := range profs[1:] {
		e := allEngines[k+1]
		diffs := 0
		fc := map[string]int64{}
		for _, f := range first.Functions {
			fc[f.Address+" "+f.Name] = f.Count
		}
		for _, f := range p.Functions {
			if want := fc[f.Address+" "+f.Name]; f.Count != want {
				if diffs++; diffs <= 10 {
					t.Errorf("%v: function %s: %d under --engine %s, %d under --engine %s", flags, f.Name, f.Count, e, want, allEngines[0])
				}
			}
		}
		if len(p.Functions) != len(first.Functions) {
			t.Errorf("%v: %d functions under --engine %s, %d under --engine %s", flags, len(p.Functions), e, len(first.Functions), allEngines[0])
		}
		type fl struct {
			file string
			line int
		}
		lc := map[fl]int64{}
		for _, l := range first.Lines {
			lc[fl{l.File, l.Line}] += l.Count
		}
		got := map[fl]int64{}
		for _, l := range p.Lines {
			got[fl{l.File, l.Line}] += l.Count
		}
		for k, n := range got {
			if lc[k] != n {
				if diffs++; diffs <= 10 {
					t.Errorf("%v: %s:%d: %d under --engine %s, %d under --engine %s", flags, k.file, k.line, n, e, lc[k], allEngines[0])
				}
			}
		}
		if len(got) != len(lc) {
			t.Errorf("%v: %d lines under --engine %s, %d under --engine %s", flags, len(got), e, len(lc), allEngines[0])
		}
	}
	return profs
}

// TestStaticScope: the function table of a static C program lists the
// program's functions with their exact counts (an uncalled one too) and
// the C library functions that ran, but not the thousand library
// functions without source lines that never ran: a note says how many
// were left out and that --all-funcs shows them, and it does. --top
// leaves them out too.
func TestStaticScope(t *testing.T) {
	needs(t)
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libc.a"); err != nil {
		t.Skip("no static C library (/usr/lib/x86_64-linux-gnu/libc.a): apt-get install libc6-dev")
	}
	t.Parallel()
	exe := buildC(t, "static/scope.c", "-static", "-g", "-O0")
	save := filepath.Join(t.TempDir(), "p.json")
	res := run(t, runOpts{args: []string{"--funcs", "--save", save, exe}})
	wantExitCode(t, res, nil, 0)
	note := regexp.MustCompile(`note: left out: (\d+) functions without source lines that never ran \(.*\): --all-funcs shows them`)
	for _, args := range [][]string{nil, {"--top", "3"}} {
		out := run(t, runOpts{args: append(append([]string{"report"}, args...), save)})
		rows := functionRows(t, out.stdout+out.stderr)
		for name, want := range map[string]string{"work": "100", "main": "1", "never": "0"} {
			if args != nil && name != "work" {
				continue // --top 3: the most called only
			}
			if got, ok := rows[name]; !ok || got.count != want || !strings.HasSuffix(got.location, "scope.c") {
				t.Errorf("report %v: function %s: %+v (listed %v), want count %s at scope.c", args, name, got, ok, want)
			}
		}
		for name, r := range rows {
			if r.count == "0" && r.location == "" {
				t.Errorf("report %v: %s, without source lines, never ran and is listed", args, name)
			}
		}
		n := 0
		if m := note.FindStringSubmatch(out.stdout + out.stderr); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		if n < 100 {
			t.Errorf("report %v: no note of the hundreds of unrun library functions left out:\n%s", args, tail(out.stderr))
		}
	}
	all := run(t, runOpts{args: []string{"report", "--all-funcs", save}})
	unrun := 0
	for _, r := range functionRows(t, all.stdout+all.stderr) {
		if r.count == "0" && r.location == "" {
			unrun++
		}
	}
	if unrun < 100 || note.MatchString(all.stdout+all.stderr) {
		t.Errorf("report --all-funcs: %d unrun functions without source lines, and the note %v; want hundreds, and no note",
			unrun, note.MatchString(all.stdout+all.stderr))
	}
}

// A functionRow is one row of the report's function table.
type functionRow struct{ count, location string }

// functionRows parses the FUNCTION CALLS table of a report, by function
// name (COUNT FUNCTION LOCATION, the location empty for a function
// without source lines).
func functionRows(t *testing.T, report string) map[string]functionRow {
	t.Helper()
	rows := map[string]functionRow{}
	in := false
	for _, l := range strings.Split(report, "\n") {
		switch {
		case strings.HasPrefix(l, "FUNCTION CALLS"):
			in = true
		case !in || strings.HasPrefix(l, "COUNT"):
		case strings.TrimSpace(l) == "":
			in = false
		default:
			f := strings.Fields(l)
			if len(f) < 2 {
				t.Fatalf("function table row %q", l)
			}
			r := functionRow{count: f[0]}
			if len(f) > 2 {
				r.location, _, _ = strings.Cut(f[2], ":")
			}
			rows[f[1]] = r
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no function table in:\n%s", tail(report))
	}
	return rows
}
