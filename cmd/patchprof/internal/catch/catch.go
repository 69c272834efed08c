// Package catch takes patchprof's own signals from the first moment Go code
// can: its init runs right after os/signal's, before the packages that take
// milliseconds to initialize on a loaded machine (regular expressions,
// tables), and long before main. Until signal.Notify, the Go runtime lets a
// SIGINT, SIGTERM or SIGHUP kill the process and drops a SIGUSR1 (os/signal,
// "Default behavior of signals in Go programs"); after it, each signal waits
// in a channel until package main, which decides what it means at each stage
// of a run, takes it.
//
// What comes before this init is not patchprof's to change: from execve to
// the runtime's first handler (initsig, before any package initializes) a
// signal has its default action, and a signal that came after the runtime's
// handlers but before this init is dropped (SIGUSR1) or kills (the others),
// as in any Go program.
//
// The package owns the catching only; it neither reports nor forwards.
package catch

import (
	"os"
	"os/signal"
)

// Term receives the termination signals (TermSignals) patchprof catches.
// Its buffer holds every kind of them at once, so none is dropped while
// main is busy.
var Term = make(chan os.Signal, 8)

// Snapshot receives the signals that ask for an interim report
// (SnapshotSignals). One pending request stands for any number.
var Snapshot = make(chan os.Signal, 1)

// wakerVar is the environment variable of the copies of patchprof the
// monitor starts only to wake its tracer thread (monitor.ExitIfWaker): they
// exit first thing in main, and catching there would only delay the wake by
// the start of the runtime's signal thread.
const wakerVar = "PATCHPROF_WAKER"

func init() {
	if os.Getenv(wakerVar) == "1" {
		return
	}
	// The first Notify waits for the runtime's signal-mask thread to start
	// (0.2 to 0.4 ms on an idle machine): paid here, in full, because a
	// Notify left to a goroutine catches nothing until that goroutine is
	// scheduled, which on a loaded machine is milliseconds later.
	signal.Notify(Term, TermSignals...)
	signal.Notify(Snapshot, SnapshotSignals...)
}
