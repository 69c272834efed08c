//go:build linux

package integration

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttachGoPreempted attaches again and again to a Go program whose
// goroutines, more than the CPUs, are preempted asynchronously (SIGURG, no
// GODEBUG) at any instruction of the function the in-process engine
// patches: a goroutine stopped inside a block before its patch resumes
// there after it (through runtime.asyncPreempt's return, a Resume site),
// and must run on from the trampoline's copy of its instruction. 50
// attaches with --funcs and 50 with --lines: the program never dies, every
// result it checks is right, and it exits as it would have. The attaches
// run without system-call stops (the Resume site a gate), unless a thread
// is inside a signal handler at the attach: at least one must.
func TestAttachGoPreempted(t *testing.T) {
	mustHavePtrace(t)
	if e := os.Getenv(engineEnv); e != "" && e != "jump" {
		t.Skipf("the in-process engine's patches are what is tested; this is the run under %s=%s", engineEnv, e)
	}
	cmd, stdin, sc := startPiped(t, buildGo(t, "gopreempt"))
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "ready ") {
		t.Fatalf("target did not start: %q", sc.Text())
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		// The target's end is seen by the test's wait below; here only
		// whether it has ended, without reaping it.
		var si unix.Siginfo
		_ = unix.Waitid(unix.P_PID, pid, &si, unix.WEXITED|unix.WNOWAIT, nil)
		close(exited)
	}()
	var counted int64
	quiet := 0
	for k := 0; k < 100; k++ {
		mode := "--funcs"
		if k%2 == 1 {
			mode = "--lines"
		}
		res, p := runProfile(t, runOpts{args: []string{mode, "-p", strconv.Itoa(pid), "--duration", "100ms"}})
		if res.code != 0 || !p.Exit.Detached {
			t.Fatalf("attach %d (%s): patchprof exit %d, saved exit %+v; want 0 and detached\n%s", k, mode, res.code, p.Exit, res)
		}
		select {
		case <-exited:
			t.Fatalf("attach %d (%s): the target died: %v\n%s", k, mode, cmd.Wait(), res)
		default:
		}
		for _, n := range p.Notes {
			if strings.Contains(n, "attached without system-call stops") {
				quiet++
				break
			}
		}
		if mode == "--funcs" {
			n, ok := funcCount(p, "main.fib")
			if !ok {
				t.Fatalf("attach %d: main.fib is not in the profile\n%s", k, res)
			}
			counted += n
		}
	}
	// Each attach lasts 100 ms from its start, which a loaded machine may
	// spend attaching: one attach may count nothing, not all fifty.
	if counted == 0 {
		t.Errorf("main.fib counted 0 times in 50 attaches while 8 goroutines call it")
	}
	// An attach is quiet unless a thread is inside a signal handler at
	// that instant (SIGURG, the preemption's): most are.
	if quiet == 0 {
		t.Errorf("no attach of 100 ran without system-call stops (the Go runtime's gate and signal-stack test)")
	}
	t.Logf("%d of 100 attaches without system-call stops", quiet)
	stdin.Write([]byte("\n"))
	if !sc.Scan() || sc.Text() != "ok true" {
		t.Errorf("target printed %q at its end, want \"ok true\"", sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("target: %v", err)
	}
}
