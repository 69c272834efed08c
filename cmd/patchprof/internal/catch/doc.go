// Package catch takes patchprof's own signals from the first moment Go code
// can: its init runs right after os/signal's, before the packages that take
// milliseconds to initialize on a loaded machine (regular expressions,
// tables), and long before main. Until signal.Notify, the Go runtime lets a
// SIGINT, SIGQUIT, SIGTERM or SIGHUP kill the process and drops a SIGUSR1
// (os/signal, "Default behavior of signals in Go programs"); after it, each
// signal waits in a channel (Term, Snapshot) until package main, which
// decides what it means at each stage of a run, takes it.
//
// What comes before this init is not patchprof's to change: from execve to
// the runtime's first handler (initsig, before any package initializes) a
// signal has its default action, and a signal that came after the runtime's
// handlers but before this init is dropped (SIGUSR1) or kills (the others),
// as in any Go program.
//
// The package owns the catching only; it neither reports nor forwards.
//
// Files:
//
//	catch.go: the Term and Snapshot channels and the init that fills them
//	    (skipped in the monitor's waker copies of patchprof)
//	catch_unix.go: TermSignals and SnapshotSignals on Unix
//	catch_other.go: the same elsewhere: the interrupt only, no snapshot
package catch
