package main

import (
	"os"
	"os/signal"
)

// notified relays signals to c, as signal.Notify does; ready is closed once
// the relay is in place.
type notified struct {
	c     chan os.Signal
	ready chan struct{}
}

// notifySoon relays sigs to a channel from a goroutine: a process's first
// signal.Notify starts the runtime's signal-mask thread and waits for it
// (0.2 to 0.4 ms measured here), which then overlaps the reading of the
// program. The caller waits on ready before the target starts, so the
// target's inherited dispositions are what they were.
func notifySoon(sigs []os.Signal) *notified {
	n := &notified{c: make(chan os.Signal, 1), ready: make(chan struct{})}
	go func() {
		signal.Notify(n.c, sigs...)
		close(n.ready)
	}()
	return n
}

// forwardSignals passes the signals patchprof catches on to the target,
// once its PID is known.
func forwardSignals(sigs <-chan os.Signal, pidc <-chan int) {
	pid := 0
	for {
		select {
		case p := <-pidc:
			pid = p
		case s := <-sigs:
			if pid != 0 {
				passOn(pid, s)
			}
		}
	}
}
