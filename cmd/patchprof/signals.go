package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/patchprof/patchprof/cmd/patchprof/internal/catch"
	"github.com/patchprof/patchprof/profile"
)

// patchprof's own signals are caught from its package initialization
// (package catch) to its exit; relay gives each one its meaning at the stage
// the run is in, so that none kills patchprof with a target left stopped or
// patched, and none is lost.
func init() {
	go relay(catch.Term, catch.Snapshot)
}

// A stage is where a run is, as patchprof's signals see it.
type stage int

const (
	// beforeStart: no target is started or attached (the program is being
	// read, or there is no program: report, merge). A termination signal
	// ends patchprof at once, saying so; a snapshot request waits for the
	// target.
	beforeStart stage = iota
	// starting: the target is being started or attached. A termination
	// signal waits for it to run; a snapshot request waits for the
	// monitor's first answer.
	starting
	// running: a termination signal is passed on to a started target, and
	// ends the profile of an attached one (detach, then report).
	running
	// ended: the target has ended or been detached and the report is being
	// written: signals are dropped, and patchprof exits as it would have.
	ended
)

// runSignals is what patchprof's signals do in one run.
type runSignals struct {
	mu     sync.Mutex
	stage  stage
	stderr io.Writer
	// before ends the one-line message said when a termination signal ends
	// patchprof before the target starts ("before ./prog started").
	before string
	attach bool
	end    func() // attached: ends the profile
	pid    int    // started: the target, once it runs
	held   []os.Signal
	// snap wakes the interim reports; a request made before they exist
	// waits in it.
	snap chan struct{}
}

// current is the run the signals are for: the latest, even after it ended,
// so that a signal in the last moments of patchprof's exit is dropped.
var (
	currentMu sync.Mutex
	current   = newRunSignals(os.Stderr, "")
)

// newRunSignals returns a run's signal state, before its target starts;
// before completes the message said if a termination signal ends patchprof
// then.
func newRunSignals(stderr io.Writer, before string) *runSignals {
	return &runSignals{stderr: stderr, before: before, snap: make(chan struct{}, 1)}
}

// watchSignals makes rs the run patchprof's signals are for, and moves
// over a snapshot request that came before it. It returns rs.
func watchSignals(rs *runSignals) *runSignals {
	currentMu.Lock()
	defer currentMu.Unlock()
	select {
	case <-current.snap:
		rs.snap <- struct{}{}
	default:
	}
	current = rs
	return rs
}

func currentRun() *runSignals {
	currentMu.Lock()
	defer currentMu.Unlock()
	return current
}

// relay gives each caught signal to the current run.
func relay(term, snap <-chan os.Signal) {
	for {
		select {
		case s := <-term:
			currentRun().terminate(s)
		case <-snap:
			currentRun().snapshot()
		}
	}
}

// terminate handles a termination signal s at the run's stage.
func (rs *runSignals) terminate(s os.Signal) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	switch rs.stage {
	case beforeStart:
		// Exiting under the lock: the target cannot start meanwhile (start
		// takes it), so nothing is left behind.
		name, status := signalStatus(s)
		fmt.Fprintf(rs.stderr, "patchprof: %s%s: exiting\n", name, rs.before)
		os.Exit(status)
	case starting:
		if rs.attach {
			rs.end()
			return
		}
		rs.held = append(rs.held, s)
	case running:
		if rs.attach {
			rs.end()
			return
		}
		passOn(rs.pid, s)
	}
}

// snapshot asks for an interim report, unless the run has ended.
func (rs *runSignals) snapshot() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.stage == ended {
		return
	}
	select {
	case rs.snap <- struct{}{}:
	default: // one pending request stands for any number
	}
}

// start enters the starting stage, just before the target is started
// (attach: attached, and end ends the profile). From here on a
// termination signal no longer ends patchprof by itself.
func (rs *runSignals) start(attach bool, end func()) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.stage, rs.attach, rs.end = starting, attach, end
}

// started records the running target's PID and passes on the termination
// signals that came while it was starting. It is called with the target
// stopped at its first instruction (or attached): a signal sent now is
// delivered as soon as it runs, before any handler of its own, so one the
// terminal had already sent it directly is not delivered twice in effect.
func (rs *runSignals) started(pid int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.stage, rs.pid = running, pid
	for _, s := range rs.held {
		send(pid, s)
	}
	rs.held = nil
}

// finish enters the ended stage: the target is gone (or detached), and a
// signal now would only cut the report short, or be passed on to a PID
// that may be another process's.
func (rs *runSignals) finish() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.stage = ended
}

// signalStatus is the name of s and the status of a process it killed, as
// a shell reports it (128+N).
func signalStatus(s os.Signal) (string, int) {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return s.String(), exitFailure
	}
	return profile.SignalName(int(sig)), profile.ShellStatus(0, int(sig))
}
