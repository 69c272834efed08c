//go:build unix

package catch

import (
	"os"
	"syscall"
)

// TermSignals are the termination requests and terminal interrupts
// patchprof catches.
var TermSignals = []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP}

// SnapshotSignals ask for an interim report.
var SnapshotSignals = []os.Signal{syscall.SIGUSR1}
