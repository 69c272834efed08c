//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// traceOptions follow every child and thread, report exec and each task's
// end while its registers are still readable (PTRACE_O_TRACEEXIT: where a
// thread another one's exit_group, a fatal signal or an execve killed was
// in its code, threadExit), and make the kernel kill the target if
// patchprof dies (ptrace(2), PTRACE_O_EXITKILL).
const traceOptions = unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEFORK |
	unix.PTRACE_O_TRACEVFORK | unix.PTRACE_O_TRACEVFORKDONE |
	unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACEEXIT | unix.PTRACE_O_EXITKILL | unix.PTRACE_O_TRACESYSGOOD

// launch starts the target stopped at its exec and seized.
//
// Preconditions: on the locked tracer thread.
func launch(o *Options) (int, error) {
	files := []uintptr{fdOf(o.Stdin, os.Stdin), fdOf(o.Stdout, os.Stdout), fdOf(o.Stderr, os.Stderr)}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	attr := &syscall.ProcAttr{Dir: o.Dir, Env: env, Files: files, Sys: &syscall.SysProcAttr{Ptrace: true}}
	pid, err := syscall.ForkExec(o.Path, o.Args, attr)
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			return 0, notPermitted(err)
		}
		return 0, &StartError{Path: o.Path, Err: err}
	}
	var ws unix.WaitStatus
	if err := waitPid(pid, &ws, unix.WALL); err != nil {
		return 0, fmt.Errorf("wait for %s to start: %w", o.Path, err)
	}
	// The first stop of a PTRACE_TRACEME child that execs is the SIGTRAP
	// of its successful execve (ptrace(2), "execve(2) under ptrace"). A
	// stop for another signal came first: a signal sent before the exec, or
	// the SIGSEGV the kernel forces on a process whose executable it could
	// not map past execve's point of no return. Deliver it, as it would be
	// natively, until the exec's stop or the end of the process.
	for ws.Stopped() && ws.StopSignal() != unix.SIGTRAP {
		if err := cont(pid, int(ws.StopSignal())); err != nil {
			unix.Kill(pid, unix.SIGKILL)
			return 0, fmt.Errorf("continue %s before its start: %w", o.Path, err)
		}
		if err := waitPid(pid, &ws, unix.WALL); err != nil {
			return 0, fmt.Errorf("wait for %s to start: %w", o.Path, err)
		}
	}
	if !ws.Stopped() {
		e := &Exit{Code: ws.ExitStatus()}
		if ws.Signaled() {
			e = &Exit{Signal: int(ws.Signal())}
		}
		return 0, &StartError{Path: o.Path, Exit: e}
	}
	// Hand over from PTRACE_TRACEME to PTRACE_SEIZE: detach into a SIGSTOP
	// group-stop (delivered before the first user instruction), then seize the
	// stopped process. The target has not run a single instruction of its own.
	if err := detach(pid, int(unix.SIGSTOP)); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		return 0, fmt.Errorf("detach %d: %w", pid, err)
	}
	if err := waitPid(pid, &ws, unix.WALL|unix.WUNTRACED); err != nil || !ws.Stopped() {
		unix.Kill(pid, unix.SIGKILL)
		return 0, fmt.Errorf("%s did not stop at its start (status %#x): %v", o.Path, uint32(ws), err)
	}
	opts := traceOptions
	if wantFilter(o) {
		opts |= unix.PTRACE_O_TRACESECCOMP // sysfilter_linux_amd64.go
	}
	if err := seize(pid, opts); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		if errors.Is(err, unix.EPERM) {
			return 0, notPermitted(err)
		}
		return 0, fmt.Errorf("seize %d: %w", pid, err)
	}
	if err := waitPid(pid, &ws, unix.WALL); err != nil || !ws.Stopped() {
		unix.Kill(pid, unix.SIGKILL)
		return 0, fmt.Errorf("%s did not report its stop (status %#x): %v", o.Path, uint32(ws), err)
	}
	// End the job-control stop we caused. Left in place, the kernel would
	// report every later PTRACE_INTERRUPT stop with SIGSTOP instead of SIGTRAP
	// (kernel/signal.c, do_jobctl_trap), indistinguishable from a real group
	// stop. The SIGCONT itself is swallowed when it is delivered.
	if err := unix.Kill(pid, unix.SIGCONT); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		return 0, fmt.Errorf("continue %d: %w", pid, err)
	}
	return pid, nil
}

func notPermitted(err error) error {
	if v, ok := statusField("/proc/self/status", "TracerPid"); ok && v != "0" {
		return fmt.Errorf("%w: patchprof is itself traced by process %s (strace -f, gdb?), so its child cannot be traced again: run patchprof outside that tracer: %w",
			ErrPtraceNotPermitted, v, err)
	}
	scope := ""
	if b, e := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); e == nil {
		scope = fmt.Sprintf(" (kernel.yama.ptrace_scope=%s)", strings.TrimSpace(string(b)))
	}
	return fmt.Errorf("%w%s: set kernel.yama.ptrace_scope to 0 or 1 (sysctl -w kernel.yama.ptrace_scope=1), or in a container allow ptrace (CAP_SYS_PTRACE, a seccomp profile that permits ptrace): %w",
		ErrPtraceNotPermitted, scope, err)
}

func fdOf(f, def *os.File) uintptr {
	if f == nil {
		f = def
	}
	return f.Fd()
}

func waitPid(pid int, ws *unix.WaitStatus, opts int) error {
	for {
		_, err := unix.Wait4(pid, ws, opts, nil)
		if err != unix.EINTR {
			return err
		}
	}
}
