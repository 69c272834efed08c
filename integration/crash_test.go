//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCrash kills the target in four ways. In each, patchprof exits with
// 128+signal, saves the signal, and still prints the header and the
// listing, with the loop that ran before the crash counted exactly.
func TestCrash(t *testing.T) {
	needs(t)
	src := filepath.Join(testdataDir, "crash.c")
	loop := markerLine(t, "crash.c", "LOOP_BODY")
	for _, tc := range []struct {
		mode   string
		code   int
		signal string
		fn     string // the function the program died in ("" = don't check)
		line   int    // its line (0 = don't check)
		header string // regexp for the header after "patchprof: PROG "
	}{
		{"segv", 139, "SIGSEGV", "crash", markerLine(t, "crash.c", "SEGV_LINE"),
			`killed by SIGSEGV \(fault address 0x0\) in crash at `},
		{"fpe", 136, "SIGFPE", "divide", markerLine(t, "crash.c", "FPE_LINE"),
			`killed by SIGFPE\b.* in divide at `},
		{"abort", 134, "SIGABRT", "", 0, `killed by SIGABRT\b`},
		{"kill", 137, "SIGKILL", "", 0, `killed by SIGKILL\b`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			exe := buildC(t, "crash.c", "-g", "-O0")
			out := filepath.Join(t.TempDir(), "report.txt")
			res, p := runProfile(t, runOpts{args: []string{"--lines", "--funcs", "-o", out, exe, tc.mode}})
			if res.code != tc.code {
				t.Errorf("%s: exit code %d, want %d\n%s", res.cmdline, res.code, tc.code, tail(res.stderr))
			}
			if strings.Contains(res.stderr, "still alive") {
				t.Errorf("the target survived: %s", res.stderr)
			}
			e := p.Exit
			if e.Signal != tc.signal || e.Code != nil {
				t.Errorf("saved exit: %v; want signal %s and no code", e, tc.signal)
			}
			if tc.fn != "" {
				if e.Function != tc.fn || e.File != src || e.Line != tc.line {
					t.Errorf("saved exit in %s at %s:%d, want %s at %s:%d", e.Function, e.File, e.Line, tc.fn, src, tc.line)
				}
				if !strings.HasPrefix(e.PC, "0x") || e.PC == "0x0" {
					t.Errorf("saved exit pc %q, want the faulting instruction's address", e.PC)
				}
			}
			if tc.signal == "SIGSEGV" && e.FaultAddress != "0x0" {
				t.Errorf("saved fault address %q, want \"0x0\"", e.FaultAddress)
			}
			wantLine(t, p, "crash.c", loop, 10)

			report := readFile(t, out)
			header, _, _ := strings.Cut(report, "\n")
			if !regexp.MustCompile(`^patchprof: \S+ ` + tc.header).MatchString(header) {
				t.Errorf("header %q, want `patchprof: PROG %s`", header, tc.header)
			}
			if tc.line != 0 {
				// cli.md: "... in crash at crash.c:12": the source (relative
				// to the working directory when under it) and the line.
				place := src
				if wd, err := os.Getwd(); err == nil {
					if rel, err := filepath.Rel(wd, src); err == nil && !strings.HasPrefix(rel, "..") {
						place = rel
					}
				}
				// --pin is on by default, and said last (issue 14).
				if want := " at " + place + ":" + strconv.Itoa(tc.line) + pinned(); !strings.HasSuffix(header, want) {
					t.Errorf("header %q does not end with %q (docs/cli.md: the place is FILE:LINE)", header, want)
				}
			}
			ls := parseListing(report)
			l, ok := findListing(ls, "crash.c", loop)
			if !ok {
				t.Fatalf("no listing line for crash.c:%d; report:\n%s", loop, tail(report))
			}
			if l.Count != "10" {
				t.Errorf("listing crash.c:%d: count %q, want 10", loop, l.Count)
			}
			var marked []int
			for _, l := range ls {
				if strings.Contains(l.Source, ">>>") {
					marked = append(marked, l.Line)
				}
			}
			switch {
			case tc.line != 0 && (len(marked) != 1 || marked[0] != tc.line):
				t.Errorf("lines marked >>>: %v, want only the crash line %d", marked, tc.line)
			case tc.line == 0 && len(marked) > 1:
				t.Errorf("lines marked >>>: %v, want at most one", marked)
			}
			if tc.line != 0 {
				cl, _ := findListing(ls, "crash.c", tc.line)
				if cl.Count != "1" {
					t.Errorf("listing crash.c:%d (crash line): count %q, want 1", tc.line, cl.Count)
				}
			}
			if tc.fn != "" {
				wantFunc(t, p, tc.fn, 1)
			}
		})
	}
}

// TestCrashReportOnStderr checks that without -o the crash report goes to
// stderr, after whatever the target wrote.
func TestCrashReportOnStderr(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "crash.c", "-g", "-O0")
	res := run(t, runOpts{args: []string{"--lines", exe, "segv"}})
	if res.code != 139 {
		t.Errorf("%s: exit code %d, want 139", res.cmdline, res.code)
	}
	if !regexp.MustCompile(`(?m)^patchprof: \S+ killed by SIGSEGV \(fault address 0x0\) in crash at `).MatchString(res.stderr) {
		t.Errorf("no crash header on stderr:\n%s", tail(res.stderr))
	}
	if _, ok := findListing(parseListing(res.stderr), "crash.c", markerLine(t, "crash.c", "SEGV_LINE")); !ok {
		t.Errorf("no listing of crash.c on stderr:\n%s", tail(res.stderr))
	}
	if res.stdout != "" {
		t.Errorf("report on stdout: %q", res.stdout)
	}
}

// TestCrashMidBlock checks that a fault in the middle of a basic block
// credits only the lines the last run of the block reached: work() is one
// block run 5 times, and its fifth run faults between its lines.
func TestCrashMidBlock(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "faultmid.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--lines", exe}})
	if res.code != 139 {
		t.Fatalf("%s: exit code %d, want 139 (SIGSEGV)\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	for marker, want := range map[string]int64{
		"BEFORE_FAULT": 5, "BEFORE_FAULT2": 5, "FAULT_LINE": 5, "AFTER_FAULT": 4, "AFTER_FAULT2": 4,
	} {
		wantLine(t, p, "faultmid.c", markerLine(t, "faultmid.c", marker), want)
	}
}
