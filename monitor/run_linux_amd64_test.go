//go:build linux && amd64

package monitor

import (
	"runtime"
	"testing"
)

// TestRunCountsCalls drives Run directly: a function called exactly n times is
// counted n times, the exit code passes through, and the benchmark helpers
// (which time the same paths) keep working.
func TestRunCountsCalls(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	calls := buildC(t, callsC)
	for _, engine := range []string{EngineClassic, EngineXOL} {
		for _, pin := range []bool{true, false} {
			perHit(t, calls, 1000, engine, pin) // fails the test unless hits == 1000 and exit 0
		}
	}
	if d := floorPerStop(t, buildC(t, trapLoopC), 100, true); d <= 0 {
		t.Fatalf("floor %v", d)
	}
}
