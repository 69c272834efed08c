package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/patchprof/patchprof/monitor"
)

// progressDelay is how long a step runs before the progress line appears:
// quick steps print nothing.
const progressDelay = time.Second

// progressTick is how often the elapsed time on the progress line is
// redrawn.
const progressTick = 250 * time.Millisecond

// progressQuiet is how long the target must have left the terminal alone
// before the line is drawn again: between the target's lines printed in a
// burst, the line would only flicker.
const progressQuiet = time.Second

// A progress shows what patchprof is doing (reading the symbols and line
// table of a large binary, planting many sites) on one line of stderr,
// redrawn in place, once a step has taken more than progressDelay. It
// draws only when stderr is a terminal: in a pipe or a file the line would
// be noise. A progress is also an io.Writer for patchprof's own messages:
// writing through it first ends the step and erases the line, so a message
// never lands in the middle of it.
//
// A target on the same terminal writes there too: the monitor calls enter
// (through monitor.Terminal) before each of its writes, which erases the
// line at once, and the line is drawn again only once the target has left
// the terminal alone for progressQuiet, and not while the target's last
// line is unfinished (a prompt). The target's bytes are never changed.
type progress struct {
	w       io.Writer
	enabled bool
	cols    func() int // the terminal's width, 0 if unknown; nil: no limit
	// after is time.After; tests replace it to drive the redraws (tick).
	after func(time.Duration) <-chan time.Time

	mu    sync.Mutex
	msg   string    // the current step, "" when none
	start time.Time // when the step began
	shown bool      // the line is on the screen
	stop  chan struct{}
	now   func() time.Time
	// count, if set, is drawn after the elapsed time (stepCounting).
	count     func() uint64
	countWhat string

	// The target's use of the terminal (enter, leave).
	busy     int       // its calls on the terminal now running
	lastUse  time.Time // when it last used the terminal
	openLine bool      // its last write left a line unfinished
}

// newProgress returns a progress drawing on w when w is a terminal.
func newProgress(w io.Writer) *progress {
	p := &progress{w: w, now: time.Now, after: time.After}
	if f, ok := w.(*os.File); ok {
		p.enabled = isTerminal(f.Fd())
		p.cols = func() int { return terminalWidth(f.Fd()) }
	}
	return p
}

// terminal returns the hooks by which the monitor tells p about the
// target's writes to p's terminal, nil when p draws nothing.
func (p *progress) terminal() *monitor.Terminal {
	f, ok := p.w.(*os.File)
	if !p.enabled || !ok {
		return nil
	}
	return &monitor.Terminal{File: f, Enter: p.enter, Leave: p.leave}
}

// enter erases the line before the target writes to or reads from the
// terminal; lineDone is false when the target's bytes leave their line
// unfinished. It returns once the erasing bytes are written.
func (p *progress) enter(lineDone bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.eraseLocked()
	p.busy++
	p.openLine = !lineDone
	p.lastUse = p.now()
}

// leave records the end of a call that enter was called for.
func (p *progress) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy > 0 {
		p.busy--
	}
	p.lastUse = p.now()
}

// tick draws the line of step stop, if it is still the current one and
// the terminal is free: the target is not using it, has not for
// progressQuiet, and has no unfinished line on it.
func (p *progress) tick(stop chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != stop || p.stop == nil || p.busy > 0 || p.openLine {
		return
	}
	if !p.lastUse.IsZero() && p.now().Sub(p.lastUse) < progressQuiet {
		return
	}
	p.draw()
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
	after := p.after
	go func() {
		wait := progressDelay
		for {
			select {
			case <-stop:
				return
			case <-after(wait):
			}
			p.tick(stop)
			wait = progressTick
		}
	}()
}

// draw redraws the progress line. Preconditions: p.mu is held.
func (p *progress) draw() {
	elapsed := p.now().Sub(p.start).Truncate(100 * time.Millisecond)
	line := fmt.Sprintf("patchprof: %s... %.1fs", p.msg, elapsed.Seconds())
	if p.count != nil {
		line += fmt.Sprintf(", %s %s", thousands(p.count()), p.countWhat)
	}
	// A line that wrapped could not be erased with one EL: it is cut to
	// the width, less one column, where some terminals wrap already.
	if p.cols != nil {
		if n := p.cols() - 1; n > 0 && len(line) > n {
			for n > 0 && !utf8.RuneStart(line[n]) {
				n--
			}
			line = line[:n]
		}
	}
	// \r returns to the start of the line, ESC [ K erases to its end
	// (ECMA-48 8.3.41, EL). One write, so that the line is drawn whole.
	io.WriteString(p.w, "\r"+line+"\x1b[K")
	p.shown = true
}

// eraseLocked takes the line off the screen, if it is there. The cursor is
// left at the start of the line, where the line's own text began.
// Preconditions: p.mu is held.
func (p *progress) eraseLocked() {
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
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
	p.eraseLocked()
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
