package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// ptraceOExitKill is PTRACE_O_EXITKILL (ptrace(2)), which the syscall
// package does not name: the target dies with floor, as with patchprof.
const ptraceOExitKill = 0x100000

// exitFailure is floor's own failure, as patchprof's (env(1)'s 125).
const exitFailure = 125

func main() {
	// ptrace(2) takes requests only from the thread that is the tracer:
	// the one that forks the target (PTRACE_TRACEME in the child) must
	// make every request.
	runtime.LockOSThread()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: floor PROGRAM [ARG...]")
		os.Exit(exitFailure)
	}
	status, err := trace(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(exitFailure)
	}
	os.Exit(status)
}

// trace runs argv as a traced child to its exit and returns the exit
// status floor passes on.
//
// Preconditions: the calling goroutine is locked to its OS thread.
func trace(argv []string) (int, error) {
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Ptrace: true},
	})
	if err != nil {
		return 0, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	// PTRACE_TRACEME makes the successful execve stop the child with
	// SIGTRAP before its first instruction (ptrace(2), "execve(2) under
	// ptrace").
	ws, err := wait(pid)
	if err != nil {
		return 0, err
	}
	if !ws.Stopped() || ws.StopSignal() != syscall.SIGTRAP {
		return 0, fmt.Errorf("%s: want the exec stop, got wait status %#x", argv[0], uint32(ws))
	}
	if err := syscall.PtraceSetOptions(pid, ptraceOExitKill); err != nil {
		return 0, fmt.Errorf("PTRACE_SETOPTIONS: %w", err)
	}
	sig := 0
	for {
		if err := syscall.PtraceCont(pid, sig); err != nil {
			return 0, fmt.Errorf("PTRACE_CONT: %w", err)
		}
		if ws, err = wait(pid); err != nil {
			return 0, err
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus(), nil
		case ws.Signaled():
			return 128 + int(ws.Signal()), nil
		case ws.Stopped():
			// A signal-delivery stop: the tracer decides whether the
			// signal is delivered, and it must be, or the target would
			// run differently than natively (a Go target's SIGURG, a
			// program's own handlers).
			sig = int(ws.StopSignal())
		default:
			sig = 0
		}
	}
}

// wait waits for the next change of the child's state.
func wait(pid int) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("wait4: %w", err)
		}
		return ws, nil
	}
}
