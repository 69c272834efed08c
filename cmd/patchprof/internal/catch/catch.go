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
