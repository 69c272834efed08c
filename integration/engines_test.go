//go:build linux

package integration

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// engineEnv names the engine every run of patchprof in this test binary uses
// (--engine); unset, patchprof's default (xol).
const engineEnv = "PATCHPROF_TEST_ENGINE"

// TestClassicEngine runs every other test of this package again with
// --engine=classic, in a child test process: each test asserts exact counts,
// so both engines are held to identical counts. (Run one test under one
// engine: PATCHPROF_TEST_ENGINE=classic go test -run TestFork ./integration/.)
func TestClassicEngine(t *testing.T) {
	if os.Getenv(engineEnv) != "" {
		t.Skipf("this is the run under %s=%s", engineEnv, os.Getenv(engineEnv))
	}
	if testing.Short() {
		t.Skip("-short: one engine only")
	}
	needs(t)
	t.Parallel()
	args := []string{"-test.run", ".", "-test.skip", "^TestClassicEngine$", "-test.count=1", "-test.timeout=30m"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), engineEnv+"=classic")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests under --engine=classic failed: %v\n%s", err, failures(string(out)))
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
