//go:build linux

package integration

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mustHaveGo skips the test when the go command is not in PATH.
func mustHaveGo(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("go not found in PATH (%v): it builds the Go targets", err)
	}
}

// needsGo is the preamble of a test running a Go target under patchprof.
func needsGo(t testing.TB) {
	t.Helper()
	mustHaveGo(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
}

// TestGoFuncs counts a function called from 8 goroutines on GOMAXPROCS
// threads (with the runtime's preemption signals flying): 40000 calls
// exactly, the program's own count.
func TestGoFuncs(t *testing.T) {
	needsGo(t)
	t.Parallel()
	exe := buildGo(t, "goroutines")
	res, p := runProfile(t, runOpts{args: []string{"--funcs", "--func", `main\.work$`, exe}})
	wantExitCode(t, res, p, 0)
	if !strings.Contains(res.stdout, "calls 40000\n") {
		t.Errorf("target's stdout %q, want \"calls 40000\"", res.stdout)
	}
	wantFunc(t, p, "main.work", 40000)
	for _, f := range p.Functions {
		if f.Name != "main.work" {
			t.Errorf("--func 'main\\.work$' planted %s too", f.Name)
		}
	}
}

// TestGoLines counts the first line of work's body with --lines.
func TestGoLines(t *testing.T) {
	needsGo(t)
	t.Parallel()
	exe := buildGo(t, "goroutines")
	res, p := runProfile(t, runOpts{args: []string{"--lines", exe}})
	wantExitCode(t, res, p, 0)
	if !strings.Contains(res.stdout, "calls 40000\n") {
		t.Errorf("target's stdout %q, want \"calls 40000\"", res.stdout)
	}
	wantLine(t, p, "main.go", markerLine(t, "goroutines/main.go", "WORK_BODY"), 40000)
	// Without --std, the runtime and standard library stay out.
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot := filepath.Join(strings.TrimSpace(string(out)), "src") + "/"
	for _, l := range p.Lines {
		if strings.HasPrefix(l.File, goroot) || strings.HasPrefix(l.File, "$GOROOT") {
			t.Errorf("without --std, a line of %s is in the profile", l.File)
			break
		}
	}
}

// TestGoStd checks that --std lets the runtime be planted: runtime.main
// runs once; without --std the same --func selects nothing of the runtime.
func TestGoStd(t *testing.T) {
	needsGo(t)
	t.Parallel()
	exe := buildGo(t, "goroutines")
	sel := `^runtime\.main$|^main\.work$`
	res, p := runProfile(t, runOpts{args: []string{"--funcs", "--std", "--func", sel, exe}})
	wantExitCode(t, res, p, 0)
	wantFunc(t, p, "runtime.main", 1)
	wantFunc(t, p, "main.work", 40000)

	res, p = runProfile(t, runOpts{args: []string{"--funcs", "--func", sel, exe}})
	wantExitCode(t, res, p, 0)
	wantFunc(t, p, "main.work", 40000)
	if _, ok := funcCount(p, "runtime.main"); ok {
		t.Errorf("%s: runtime.main planted without --std", res.cmdline)
	}
}

// TestGoRecoveredFault dereferences nil 1000 times under recover, and a valid
// pointer 1000 times: the faulting load is a line site, so the fault must
// reach Go's runtime with the program's own PC (the out-of-line engine moves
// it out of the slot), and each entry counts once, as gcov counts it: 2000.
func TestGoRecoveredFault(t *testing.T) {
	needs(t)
	mustHaveGo(t)
	t.Parallel()
	exe := buildGo(t, "gorecover")
	res, p := runProfile(t, runOpts{args: []string{"--lines", exe}})
	wantExitCode(t, res, p, 0)
	if res.stdout != "recovered 1000 sum 7000\n" {
		t.Errorf("target's stdout %q, want \"recovered 1000 sum 7000\\n\"", res.stdout)
	}
	wantLine(t, p, "main.go", markerLineIn(t, filepath.Join(testdataDir, "gorecover", "main.go"), "DEREF"), 2000)
}
