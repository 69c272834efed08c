//go:build linux

package integration

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestAttachExecRace: patchprof -p reads a process's executable before
// it attaches; a process that execs another program in between must not
// have the first program's sites planted in the second's code. A process
// that execs back and forth between two different programs every
// millisecond is attached to again and again: each attach either says
// the process exec'd meanwhile and lets it go untouched, or attaches and
// detaches; the process runs on, untraced, after every one.
func TestAttachExecRace(t *testing.T) {
	mustHavePtrace(t)
	ping := buildC(t, "pingpong.c", "-g", "-O0")
	pong := buildC(t, "pingpong.c", "-g", "-O0", "-DPONG")
	cmd := exec.Command(ping, pong)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	alive := func(when string) {
		t.Helper()
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("the exec'ing process is gone %s: %v", when, err)
		}
	}
	refused, attached := 0, 0
	for try := 0; try < 6; try++ {
		args := []string{"--funcs", "-o", "/dev/null", "-p", itoa(pid)}
		if e := os.Getenv(engineEnv); e != "" {
			args = append([]string{"--engine=" + e}, args...)
		}
		pp := exec.Command(patchprofBin, args...)
		stderr, err := pp.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := pp.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stderr)
		var said []string
		for sc.Scan() {
			said = append(said, sc.Text())
			if strings.HasPrefix(sc.Text(), "patchprof: attached to PID ") {
				attached++
				pp.Process.Signal(syscall.SIGINT)
			}
		}
		err = pp.Wait()
		all := strings.Join(said, "\n")
		switch {
		case strings.Contains(all, "exec'd") && strings.Contains(all, "while patchprof attached"):
			refused++
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Errorf("try %d: a refused attach exited %v, want a non-zero status\n%s", try, err, all)
			}
		case err != nil:
			t.Fatalf("try %d: patchprof -p: %v\n%s", try, err, all)
		}
		alive("after an attach")
		waitUntraced(t, pid)
	}
	alive("at the end")
	t.Logf("%d attaches refused (the process exec'd meanwhile), %d made", refused, attached)
}
