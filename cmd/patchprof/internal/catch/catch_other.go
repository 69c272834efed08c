//go:build !unix

package catch

import "os"

// TermSignals are the termination requests patchprof catches. Outside Unix
// only the interrupt exists.
var TermSignals = []os.Signal{os.Interrupt}

// SnapshotSignals: none outside Unix.
var SnapshotSignals []os.Signal
