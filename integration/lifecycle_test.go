//go:build linux

package integration

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPatchprofKilled: when patchprof itself dies (SIGKILL, nothing of it can
// clean up), the kernel kills the target (PTRACE_O_EXITKILL): no process lives
// on with planted int3s.
func TestPatchprofKilled(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := buildC(t, "forever.c", "-g", "-O0")
	cmd := exec.Command(patchprofBin, "--funcs", exe)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("reading the target's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("target printed %q, want its pid", line)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	deadline := time.Now().Add(eventBound)
	for {
		// Gone, or a zombie waiting for init to reap it: either way dead.
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("target %d still alive %v after patchprof was killed: %s", pid, eventBound, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPtraceRefused: under another tracer (strace -f), the kernel refuses to
// let patchprof trace its child. patchprof says so in one line and exits 125.
func TestPtraceRefused(t *testing.T) {
	mustHaveCC(t)
	mustHaveCLI(t)
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed: cannot put patchprof under another tracer")
	}
	exe := buildC(t, "calls.c", "-g", "-O0")
	cmd := exec.Command(strace, "-f", "-o", os.DevNull, patchprofBin, "--funcs", exe)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if code != exitFailure {
		t.Fatalf("exit code %d (%v), want 125; stderr:\n%s", code, err, stderr.String())
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "patchprof: ptrace not permitted") || !strings.Contains(msg, "traced by process") {
		t.Fatalf("stderr %q, want one line `patchprof: ptrace not permitted: patchprof is itself traced by process ...`", msg)
	}
}

// TestTerminationForwarded: SIGTERM, SIGHUP, and SIGINT sent to patchprof alone
// (not typed at a terminal, which signals the target itself) are passed on to
// the target; patchprof still reports and exits with 128+N.
func TestTerminationForwarded(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := buildC(t, "forever.c", "-g", "-O0")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(patchprofBin, "--funcs", "--func", "^tick$", exe)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
				cmd.Process.Kill()
				t.Fatalf("reading the target's pid: %v", err)
			}
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(eventBound):
				cmd.Process.Kill()
				t.Fatalf("patchprof still running %v after %v", eventBound, sig)
			}
			if code := cmd.ProcessState.ExitCode(); code != 128+int(sig) {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, 128+int(sig), stderr.String())
			}
			name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[sig]
			if !strings.Contains(stderr.String(), "killed by "+name) || !strings.Contains(stderr.String(), "FUNCTION CALLS") {
				t.Fatalf("report missing the signal or the function table:\n%s", stderr.String())
			}
		})
	}
}

// TestIntervalSave: --interval with --save replaces the saved profile while
// the target runs (an interim profile, exit "running"), and the final one
// replaces it at the end. The target calls work only when told, on a pipe
// the test holds until an interim profile has come: its counts are known
// exactly, and it lives as long as the test needs.
func TestIntervalSave(t *testing.T) {
	needs(t)
	exe := buildC(t, "oncommand.c", "-g", "-O0", "-pthread")
	save := filepath.Join(t.TempDir(), "p.json")
	r := startOwn(t, "--save", save, "--funcs", "--func", "^work$", "--interval", "200ms", exe)
	if s, _ := r.line(); s != "ready" {
		t.Fatalf("target printed %q, want ready\n%s", s, r.stderr.String())
	}
	if s := r.ask(200); s != "done 200 200" {
		t.Fatalf("target answered %q, want \"done 200 200\"", s)
	}
	// The first interim profile of a moment after the 200 calls; one of
	// an earlier moment has fewer (a snapshot served between two of the
	// calls' stops has some of them), never more.
	var interim *profile
	for deadline := time.Now().Add(eventBound); interim == nil; time.Sleep(20 * time.Millisecond) {
		if p, err := readProfile(save); err == nil && p.Exit.Running {
			switch n, _ := funcCount(p, "work"); {
			case n == 200:
				interim = p
			case n > 200:
				t.Fatalf("interim profile: work %d, want at most 200", n)
			}
		}
		select {
		case <-r.done:
			t.Fatalf("patchprof ended with no interim profile of the 200 calls:\n%s", r.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no interim profile (exit running) of the 200 calls in %v", eventBound)
		}
	}
	if s := r.ask(300); s != "done 300 500" {
		t.Fatalf("target answered %q, want \"done 300 500\"", s)
	}
	r.in.Close()
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	final, err := readProfile(save)
	if err != nil {
		t.Fatal(err)
	}
	if final.Exit.Running || final.Exit.Code == nil || *final.Exit.Code != 0 {
		t.Errorf("final saved exit %v, want code 0", final.Exit)
	}
	a, _ := funcCount(interim, "work")
	b, _ := funcCount(final, "work")
	if a == 0 || a > b || b != 500 {
		t.Errorf("work: interim count %d, final %d; want 0 < interim <= final, final 500", a, b)
	}
}

// TestUSR1Report: SIGUSR1 to patchprof prints an interim report at once and
// profiling goes on to the end. The target waits on a pipe the test holds
// until the interim report is out: no fixed life to outrun on a loaded
// machine.
func TestUSR1Report(t *testing.T) {
	needs(t)
	exe := buildC(t, "oncommand.c", "-g", "-O0", "-pthread")
	r := startOwn(t, "--funcs", "--func", "^work$", exe)
	if s, _ := r.line(); s != "ready" {
		t.Fatalf("target printed %q, want ready\n%s", s, r.stderr.String())
	}
	r.ask(200)
	r.signal(syscall.SIGUSR1)
	if !r.waitStderr(interimRE) {
		t.Fatalf("patchprof ended with no interim report:\n%s", r.stderr.String())
	}
	r.in.Close()
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	i := strings.Index(r.stderr.String(), "is running: interim report")
	j := strings.Index(r.stderr.String(), "exited with code 0")
	if i < 0 || j < i {
		t.Errorf("want an interim report, then the final one:\n%s", r.stderr.String())
	}
}
