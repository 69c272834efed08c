//go:build linux && amd64

package monitor

import (
	"bytes"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// forkAtC handles SIGUSR1 (so an attach reads that handler with an injected
// rt_sigaction), forks when a byte arrives on stdin, and says what fork
// returned: exit 0 and "fork PID" when the child ran and exited 7.
const forkAtC = `#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static void on(int s) { (void)s; }
int main(void) {
	struct sigaction sa = {0};
	sa.sa_handler = on;
	sigaction(SIGUSR1, &sa, 0);
	char c;
	if (read(0, &c, 1) != 1)
		return 2;
	pid_t p = fork();
	if (p == 0)
		_exit(7);
	if (p < 0) {
		printf("fork failed: errno %d\n", errno);
		return 3;
	}
	int st;
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
		return 4;
	printf("fork %d\n", p);
	return 0;
}
`

// TestAttachInsideFork attaches to a process whose only thread reports, as
// its first stop, the PTRACE_EVENT_FORK of a fork it is making (the race
// that TestAttachCycles meets about once in 400 attaches, there in clone3).
// The thread has not returned from fork: the attach must not run its
// rt_sigaction there, where the kernel would finish fork over it (the
// injected call got the child's PID as its number, ENOSYS, and fork returned
// ENOSYS to the program, whose child was made all the same). The attach
// succeeds, and the program sees fork return its child.
func TestAttachInsideFork(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command(buildC(t, forkAtC))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for deadline := time.Now().Add(2 * time.Minute); !signalInMask("/proc/"+strconv.Itoa(pid)+"/status", "SigCgt", int(unix.SIGUSR1)); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the target did not install its SIGUSR1 handler")
		}
	}
	var ws unix.WaitStatus
	if err := seize(pid, attachOptions); err != nil {
		t.Skipf("ptrace not permitted here: %v", err)
	}
	if err := interrupt(pid); err != nil {
		t.Fatal(err)
	}
	if err := waitPid(pid, &ws, unix.WALL); err != nil || decodeStatus(ws).kind != stopEvent {
		t.Fatalf("first stop: status %#x, %v", uint32(ws), err)
	}
	// Run it into its fork, and stop there.
	if err := cont(pid, 0); err != nil {
		t.Fatal(err)
	}
	in.Write([]byte{'f'})
	if err := waitPid(pid, &ws, unix.WALL); err != nil || decodeStatus(ws).event != unix.PTRACE_EVENT_FORK {
		t.Fatalf("want the fork's event stop: status %#x, %v", uint32(ws), err)
	}
	child, err := unix.PtraceGetEventMsg(pid)
	if err != nil {
		t.Fatal(err)
	}

	m := newMon(Options{Attach: pid})
	perr := m.plantRoot(pid, []int{pid}, []event{{tid: pid, ws: ws}})
	if perr == nil && m.threads[pid].created != child {
		t.Errorf("the fork's child %d is not kept for its event (created %d)", child, m.threads[pid].created)
	}

	// Let both go, as a failed attach does (the child is traced from its birth).
	if err := detach(pid, 0); err != nil {
		t.Errorf("detach %d: %v", pid, err)
	}
	stopped := false
	for _, ev := range m.queue {
		stopped = stopped || ev.tid == int(child)
	}
	if !stopped {
		if err := waitPid(int(child), &ws, unix.WALL); err != nil {
			t.Fatalf("wait for the child %d: %v", child, err)
		}
	}
	if err := detach(int(child), 0); err != nil {
		t.Errorf("detach the child %d: %v", child, err)
	}
	werr := cmd.Wait()
	if perr != nil {
		t.Errorf("attach inside fork: %v", perr)
	}
	if got, want := strings.TrimSpace(out.String()), "fork "+strconv.Itoa(int(child)); werr != nil || got != want {
		t.Errorf("the target ended with %v printing %q; want exit 0 and %q", werr, got, want)
	}
}

// TestLeaderFirst: the leader is seized before any other thread, whatever
// the order of the listing (sorted by name: "10" before "9").
func TestLeaderFirst(t *testing.T) {
	for _, c := range []struct {
		pid   int
		names []string
		want  []int
	}{
		{4198, []string{"31000", "4198", "4210"}, []int{4198, 31000, 4210}},
		{9, []string{"10", "11", "9"}, []int{9, 10, 11}},
		{5, []string{"5", "7"}, []int{5, 7}},
		{5, []string{"7", "x", "8"}, []int{7, 8}}, // the leader is gone
		{5, nil, []int{}},
	} {
		if got := leaderFirst(c.pid, c.names); !slices.Equal(got, c.want) {
			t.Errorf("leaderFirst(%d, %q) = %v, want %v", c.pid, c.names, got, c.want)
		}
	}
}
