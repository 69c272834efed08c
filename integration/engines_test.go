//go:build linux

package integration

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// engineEnv names the engine every run of patchprof in this test binary uses
// (--engine); unset, patchprof's default (jump).
const engineEnv = "PATCHPROF_TEST_ENGINE"

// TestClassicEngine and TestXOLEngine run every other test of this package
// again with --engine=classic and --engine=xol, in a child test process:
// each test asserts exact counts, so every engine is held to identical
// counts. (Run one test under one engine: PATCHPROF_TEST_ENGINE=classic go
// test -run TestFork ./integration/.)
func TestClassicEngine(t *testing.T) { rerunUnder(t, "classic") }

// TestXOLEngine: see TestClassicEngine.
func TestXOLEngine(t *testing.T) { rerunUnder(t, "xol") }

// rerunUnder runs the package's tests again under engine.
func rerunUnder(t *testing.T, engine string) {
	if os.Getenv(engineEnv) != "" {
		t.Skipf("this is the run under %s=%s", engineEnv, os.Getenv(engineEnv))
	}
	if testing.Short() {
		t.Skip("-short: one engine only")
	}
	needs(t)
	t.Parallel()
	// The child's limit only catches a hang: the parent's -timeout (the
	// README's 60m) bounds the whole run. Under classic, with the machine
	// loaded (4 busy loops beside the suite), the child took 30 minutes.
	args := []string{"-test.run", ".", "-test.skip", "^(TestClassicEngine|TestXOLEngine)$", "-test.count=1", "-test.timeout=58m"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), engineEnv+"="+engine)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests under --engine=%s failed: %v\n%s", engine, err, failures(string(out)))
	}
}

// failures keeps the failing tests' lines of a test run's output (or its
// tail when none is marked).
func failures(out string) string {
	var keep []string
	lines := strings.Split(out, "\n")
	for k, l := range lines {
		if strings.Contains(l, "--- FAIL") || strings.HasPrefix(strings.TrimSpace(l), "FAIL") {
			for j := k; j < len(lines) && j < k+40; j++ {
				keep = append(keep, lines[j])
			}
		}
	}
	if len(keep) == 0 {
		return tail(out)
	}
	return strings.Join(keep, "\n")
}

// pinned is the end of a report's first line when patchprof ran the target
// on one CPU: the default of the trap engines, not of the in-process one.
func pinned() string {
	if e := os.Getenv(engineEnv); e == "" || e == "jump" {
		return ""
	}
	return " (run on one CPU: --pin)"
}
