//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"reflect"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Unit tests of the pure helpers: no ptrace, no target.

func TestParseMaps(t *testing.T) {
	text := `55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 1234 /usr/bin/prog
55d0c0a01000-55d0c0a02000 r-xp 00001000 08:01 1234 /usr/bin/prog
7f0000000000-7f0000021000 rw-p 00000000 00:00 0
7f1000000000-7f1000100000 r-xp 00028000 08:01 99 /lib/x86_64-linux-gnu/libc.so.6
7f2000000000-7f2000001000 r-xp 00000000 08:01 77 /tmp/gone.so (deleted)
7f2100000000-7f2100001000 r-xp 00000000 08:01 78 /tmp/my dir/lib.so
7f3000000000-7f3000001000 r-xp 00000000 00:00 0 [vdso]
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]
zzzz-7f4000001000 r-xp 00000000 08:01 5 /bad/start
7f5000000000-7f5000001000 r-xp 0000zz00 08:01 5 /bad/offset
short line
`
	want := []region{
		{lo: 0x55d0c0a01000, hi: 0x55d0c0a02000, off: 0x1000, path: "/usr/bin/prog"},
		{lo: 0x7f1000000000, hi: 0x7f1000100000, off: 0x28000, path: "/lib/x86_64-linux-gnu/libc.so.6"},
		// Kept as /proc/PID/exe names a replaced executable.
		{lo: 0x7f2000000000, hi: 0x7f2000001000, off: 0, path: "/tmp/gone.so (deleted)"},
		{lo: 0x7f2100000000, hi: 0x7f2100001000, off: 0, path: "/tmp/my dir/lib.so"},
	}
	if got := parseMaps([]byte(text)); !reflect.DeepEqual(got, want) {
		t.Errorf("parseMaps = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "\n\n", "- - - - - -", "1-2 r-x 0 0 0 relative/path"} {
		if got := parseMaps([]byte(bad)); len(got) != 0 {
			t.Errorf("parseMaps(%q) = %+v, want none", bad, got)
		}
	}
}

// Wait statuses as the kernel makes them (wait(2); ptrace(2)): exit code in
// bits 8-15, a killing signal in bits 0-6, a stop as 0x7f with the signal in
// bits 8-15 and the PTRACE_EVENT_* in bits 16-23.
func exited(code int) unix.WaitStatus           { return unix.WaitStatus(code << 8) }
func killed(sig syscall.Signal) unix.WaitStatus { return unix.WaitStatus(sig) }
func stoppedBy(sig syscall.Signal, event int) unix.WaitStatus {
	return unix.WaitStatus(event<<16 | int(sig)<<8 | 0x7f)
}

func TestDecodeStatus(t *testing.T) {
	for _, c := range []struct {
		ws        unix.WaitStatus
		want      stop
		inSyscall bool
		jobStop   bool
	}{
		{exited(0), stop{kind: stopGone}, false, false},
		{exited(3), stop{kind: stopGone, code: 3}, false, false},
		{killed(unix.SIGSEGV), stop{kind: stopGone, sig: unix.SIGSEGV}, false, false},
		{stoppedBy(unix.SIGTRAP, 0), stop{kind: stopSignal, sig: unix.SIGTRAP}, false, false},
		{stoppedBy(unix.SIGSEGV, 0), stop{kind: stopSignal, sig: unix.SIGSEGV}, false, false},
		{stoppedBy(unix.SIGTRAP, unix.PTRACE_EVENT_CLONE), stop{kind: stopNewTask, event: unix.PTRACE_EVENT_CLONE, sig: unix.SIGTRAP}, true, false},
		{stoppedBy(unix.SIGTRAP, unix.PTRACE_EVENT_FORK), stop{kind: stopNewTask, event: unix.PTRACE_EVENT_FORK, sig: unix.SIGTRAP}, true, false},
		{stoppedBy(unix.SIGTRAP, unix.PTRACE_EVENT_VFORK), stop{kind: stopNewTask, event: unix.PTRACE_EVENT_VFORK, sig: unix.SIGTRAP}, true, false},
		{stoppedBy(unix.SIGTRAP, unix.PTRACE_EVENT_VFORK_DONE), stop{kind: stopVforkDone, event: unix.PTRACE_EVENT_VFORK_DONE, sig: unix.SIGTRAP}, true, false},
		{stoppedBy(unix.SIGTRAP, unix.PTRACE_EVENT_EXEC), stop{kind: stopExec, event: unix.PTRACE_EVENT_EXEC, sig: unix.SIGTRAP}, true, false},
		// Our PTRACE_INTERRUPT and a new task's first stop: SIGTRAP.
		{stoppedBy(unix.SIGTRAP, unix.PTRACE_EVENT_STOP), stop{kind: stopEvent, event: unix.PTRACE_EVENT_STOP, sig: unix.SIGTRAP}, false, false},
		// A group-stop reports the stop signal, not SIGTRAP.
		{stoppedBy(unix.SIGTSTP, unix.PTRACE_EVENT_STOP), stop{kind: stopEvent, event: unix.PTRACE_EVENT_STOP, sig: unix.SIGTSTP}, false, true},
		{stoppedBy(unix.SIGSTOP, unix.PTRACE_EVENT_STOP), stop{kind: stopEvent, event: unix.PTRACE_EVENT_STOP, sig: unix.SIGSTOP}, false, true},
		// A task about to end (traceOptions asks for PTRACE_EVENT_EXIT).
		{stoppedBy(unix.SIGTRAP, unix.PTRACE_EVENT_EXIT), stop{kind: stopExit, event: unix.PTRACE_EVENT_EXIT, sig: unix.SIGTRAP}, true, false},
		// Unknown events are ignored.
		{stoppedBy(unix.SIGTRAP, unix.PTRACE_EVENT_SECCOMP), stop{kind: stopSeccomp, event: unix.PTRACE_EVENT_SECCOMP, sig: unix.SIGTRAP}, true, false},
		{unix.WaitStatus(0xffff), stop{kind: stopOther}, false, false}, // WIFCONTINUED
	} {
		got := decodeStatus(c.ws)
		if got != c.want {
			t.Errorf("decodeStatus(%#x) = %+v, want %+v", uint32(c.ws), got, c.want)
		}
		if got.inSyscall() != c.inSyscall || got.jobControl() != c.jobStop {
			t.Errorf("decodeStatus(%#x): inSyscall %v jobControl %v, want %v %v",
				uint32(c.ws), got.inSyscall(), got.jobControl(), c.inSyscall, c.jobStop)
		}
	}
}

func TestSyncFault(t *testing.T) {
	const segvMaperr, siUser, siTkill = 1, 0, -6
	for _, c := range []struct {
		sig  syscall.Signal
		code int32
		want bool
	}{
		{unix.SIGSEGV, segvMaperr, true},
		{unix.SIGBUS, 2, true},
		{unix.SIGFPE, 1, true},
		{unix.SIGILL, 1, true},
		{unix.SIGSEGV, siUser, false}, // kill -SEGV: sent, not raised
		{unix.SIGSEGV, siTkill, false},
		{unix.SIGTRAP, siKernel, false}, // an int3 is not a fault of the instruction
		{unix.SIGINT, siKernel, false},
	} {
		if got := syncFault(c.sig, c.code); got != c.want {
			t.Errorf("syncFault(%v, %d) = %v, want %v", c.sig, c.code, got, c.want)
		}
		st := sigStop{sig: c.sig, info: siginfo{Code: c.code}}
		if st.fault() {
			t.Errorf("sigStop{%v}.fault() with no siginfo read = true", c.sig)
		}
		st.haveInfo = true
		if st.fault() != c.want {
			t.Errorf("sigStop{%v, %d}.fault() = %v, want %v", c.sig, c.code, st.fault(), c.want)
		}
	}
}

func TestGone(t *testing.T) {
	if !gone(unix.ESRCH) || !gone(fmt.Errorf("continue thread 5: %w", unix.ESRCH)) {
		t.Error("gone(ESRCH) = false")
	}
	if gone(nil) || gone(unix.EPERM) || gone(errors.New("ESRCH")) {
		t.Error("gone of something else = true")
	}
}

func TestThreadPredicates(t *testing.T) {
	for _, c := range []struct {
		th                        thread
		runsCode, idle, canInject bool
	}{
		{thread{state: running}, true, false, false},
		{thread{state: running, vforkWait: true}, false, false, false},
		{thread{state: stopped}, false, true, true},
		{thread{state: stopped, held: 1}, false, false, true},
		// Created, its first stop not seen: ptrace refuses it (ESRCH), so
		// it cannot run an injected call (a detach that tried left the
		// trampolines behind, TestAttachCycles).
		{thread{state: stopped, fresh: true}, false, false, false},
		{thread{state: stopped, inSyscall: true}, false, true, false},
		{thread{state: listening}, false, false, false},
	} {
		if c.th.runsCode() != c.runsCode || c.th.idle() != c.idle || c.th.canInject() != c.canInject {
			t.Errorf("%+v: runsCode %v idle %v canInject %v, want %v %v %v", c.th,
				c.th.runsCode(), c.th.idle(), c.th.canInject(), c.runsCode, c.idle, c.canInject)
		}
	}
}
