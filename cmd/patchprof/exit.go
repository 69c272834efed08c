package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/profiler"
)

// patchprof's own exit statuses, those of env(1), timeout(1) and nice(1),
// so a script can tell them from the target's statuses, which patchprof
// passes through (128+N when signal N killed the target).
const (
	// exitFailure: patchprof itself failed (a bad flag, a bad profile, an
	// output path it cannot write, ptrace refused, a write that failed).
	exitFailure = 125
	// exitCannotRun: the program was found but cannot be run (not
	// executable, a directory, not an x86-64 ELF executable, refused by
	// execve).
	exitCannotRun = 126
	// exitNotFound: the program was not found.
	exitNotFound = 127
)

// cannotRun is the error of a program that exists but cannot be run.
func cannotRun(format string, args ...any) error {
	return &profiler.UserError{Msg: fmt.Sprintf(format, args...), Status: exitCannotRun}
}

// notFound is the error of a program that does not exist.
func notFound(format string, args ...any) error {
	return &profiler.UserError{Msg: fmt.Sprintf(format, args...), Status: exitNotFound}
}

// failed is a mistake the user can fix, or a failure of patchprof itself
// (exitFailure), printed as one line.
func failed(format string, args ...any) error {
	return &profiler.UserError{Msg: fmt.Sprintf(format, args...)}
}

// statusOf is the exit status for err: a *profiler.UserError's own, or
// exitFailure.
func statusOf(err error) int {
	var ue *profiler.UserError
	if errors.As(err, &ue) && ue.Status != 0 {
		return ue.Status
	}
	if s, ok := startStatus(err); ok {
		return s
	}
	return exitFailure
}

// fail prints err as one line on stderr and returns its exit status.
func fail(stderr io.Writer, err error) int {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(stderr, "patchprof: %s\n", msg)
	return statusOf(err)
}

// startStatus is the exit status for a program that did not start: 127
// when execve did not find it (or its ELF interpreter), 126 when execve
// refused it, and the shell's status of the process when it ended before
// its first instruction.
func startStatus(err error) (int, bool) {
	var se *monitor.StartError
	switch {
	case !errors.As(err, &se):
		return 0, false
	case se.Exit != nil:
		return profile.ShellStatus(se.Exit.Code, se.Exit.Signal), true
	case errors.Is(se.Err, os.ErrNotExist):
		return exitNotFound, true
	}
	return exitCannotRun, true
}

// startFailure describes a program that ended before its first
// instruction, with the status it ended with, for the one line patchprof
// prints instead of a report.
func startFailure(prog string, e *monitor.Exit) string {
	how := fmt.Sprintf("it exited with code %d", e.Code)
	if e.Signal != 0 {
		how = "the kernel killed it with " + profile.SignalName(e.Signal)
	}
	return fmt.Sprintf("%s failed to start: %s before its first instruction (it could not be loaded: a damaged executable?); status %d",
		prog, how, profile.ShellStatus(e.Code, e.Signal))
}
