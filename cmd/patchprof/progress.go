package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progressDelay is how long a step runs before the progress line appears:
// quick steps print nothing.
const progressDelay = time.Second

// progressTick is how often the elapsed time on the progress line is
// redrawn.
const progressTick = 250 * time.Millisecond

// A progress shows what patchprof is doing (reading the symbols and line
// table of a large binary, planting many sites) on one line of stderr,
// redrawn in place, once a step has taken more than progressDelay. It
// draws only when stderr is a terminal: in a pipe or a file the line would
// be noise. A progress is also an io.Writer for patchprof's own messages:
// writing through it first ends the step and erases the line, so a message
// never lands in the middle of it.
type progress struct {
	w       io.Writer
	enabled bool

	mu    sync.Mutex
	msg   string    // the current step, "" when none
	start time.Time // when the step began
	shown bool      // the line is on the screen
	stop  chan struct{}
	now   func() time.Time
	// count, if set, is drawn after the elapsed time (stepCounting).
	count     func() uint64
	countWhat string
}

// newProgress returns a progress drawing on w when w is a terminal.
func newProgress(w io.Writer) *progress {
	p := &progress{w: w, now: time.Now}
	if f, ok := w.(*os.File); ok {
		p.enabled = isTerminal(f.Fd())
	}
	return p
}

// step begins a step described by msg ("reading ./prog"), ending the one
// before.
func (p *progress) step(msg string) {
	p.stepCounting(msg, nil, "")
}

// stepCounting begins a step whose line also shows count() followed by
// what ("hits"): a long run shows how far it got.
func (p *progress) stepCounting(msg string, count func() uint64, what string) {
	p.done()
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msg, p.start = msg, p.now()
	p.count, p.countWhat = count, what
	stop := make(chan struct{})
	p.stop = stop
	go func() {
		t := time.NewTimer(progressDelay)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			p.mu.Lock()
			if p.stop == stop {
				p.draw()
			}
			p.mu.Unlock()
			t.Reset(progressTick)
		}
	}()
}

// draw redraws the progress line. Preconditions: p.mu is held.
func (p *progress) draw() {
	elapsed := p.now().Sub(p.start).Truncate(100 * time.Millisecond)
	// \r returns to the start of the line, ESC [ K erases to its end
	// (ECMA-48 8.3.41, EL).
	fmt.Fprintf(p.w, "\rpatchprof: %s... %.1fs", p.msg, elapsed.Seconds())
	if p.count != nil {
		fmt.Fprintf(p.w, ", %s %s", thousands(p.count()), p.countWhat)
	}
	io.WriteString(p.w, "\x1b[K")
	p.shown = true
}

// done ends the current step, erasing its line if it was drawn.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
}

func (p *progress) endLocked() {
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
	p.msg = ""
	p.count = nil
}

// thousands formats n with thousands separators (1,234,567).
func thousands(n uint64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Write ends the current step and writes b to the underlying writer.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
	return p.w.Write(b)
}
