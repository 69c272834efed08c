//go:build linux

package integration

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// killedTrialsEnv sets how many times TestKilledAttach kills patchprof per
// mode (default 1): docs/design.md's figure is 20 of each.
const killedTrialsEnv = "PATCHPROF_KILLED_TRIALS"

// TestKilledAttach: patchprof attached (-p) to a program in a hot loop is
// killed with SIGKILL once every function of the loop has run, so that
// every site the loop reaches is patched and no int3 is left on its path.
// PTRACE_O_EXITKILL is not set for an attach, so the kernel detaches the
// program, which must run on (three more beats) in its trampolines. What
// it does when it later reaches code it had not run (its exit path, still
// planted with int3s) is logged, not asserted: it dies of SIGTRAP (see
// docs/design.md, "Attach and detach").
func TestKilledAttach(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	trials := 1
	if s := os.Getenv(killedTrialsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a count", killedTrialsEnv, s)
		}
		trials = n
	}
	exe := buildC(t, "killed.c", "-g", "-O0")
	for _, mode := range [][]string{{"--funcs"}, {"--funcs", "--lines"}} {
		ranOn, exits := 0, map[string]int{}
		for k := 0; k < trials; k++ {
			cmd, in, sc := startPiped(t, exe, "200000")
			if !sc.Scan() || !strings.HasPrefix(sc.Text(), "ready ") {
				t.Fatalf("target did not start: %q", sc.Text())
			}
			args := append([]string{"--engine=jump"}, mode...)
			pp, _ := startAttached(t, append(args, "-p", strconv.Itoa(cmd.Process.Pid))...)
			beats := func(n int) bool {
				for ; n > 0; n-- {
					if !sc.Scan() || !strings.HasPrefix(sc.Text(), "beat ") {
						return false
					}
				}
				return true
			}
			// A beat begun before the attach may end after it: the
			// third is a whole round under patchprof.
			if !beats(3) {
				t.Fatalf("%v: the target stopped beating while attached: %v", mode, cmd.Wait())
			}
			if err := pp.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			pp.Wait()
			if beats(3) {
				ranOn++
			}
			in.Close()
			for sc.Scan() {
			}
			exits[exitOf(cmd.Wait())]++
		}
		t.Logf("%v: after SIGKILL of patchprof, %d of %d targets ran on; their ends: %v", mode, ranOn, trials, exits)
		if ranOn != trials {
			t.Errorf("%v: %d of %d targets ran on after patchprof was killed, want all: every site of their loop was patched", mode, ranOn, trials)
		}
	}
}

// exitOf describes how a command ended: "exit N" or "signal NAME".
func exitOf(err error) string {
	var ee *exec.ExitError
	if err == nil {
		return "exit 0"
	}
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "signal " + ws.Signal().String()
		}
		return "exit " + strconv.Itoa(ee.ExitCode())
	}
	return err.Error()
}
