package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// manualProgress returns an enabled progress on a buffer whose redraws the
// test drives with tick, on a clock it sets.
func manualProgress() (p *progress, b *syncBuffer, now *time.Time) {
	b = new(syncBuffer)
	p = newProgress(b)
	p.enabled = true
	p.after = func(time.Duration) <-chan time.Time { return nil } // no redraw but the test's
	now = new(time.Time)
	*now = time.Unix(0, 0)
	p.now = func() time.Time { return *now }
	return p, b, now
}

// tickNow draws p's current step if it may.
func tickNow(p *progress) {
	p.mu.Lock()
	stop := p.stop
	p.mu.Unlock()
	p.tick(stop)
}

// progressDrawRE matches what the progress line writes: a drawing, or an
// erasure.
var progressDrawRE = regexp.MustCompile("\r(patchprof: [^\r\n\x1b]*)?\x1b\\[K")

// TestProgressSharedTerminal: a target writing to the terminal has the line
// erased before each write; the line comes back only after progressQuiet
// without a write, never over an unfinished line nor during a read, and the
// target's bytes reach the terminal unchanged and in order.
func TestProgressSharedTerminal(t *testing.T) {
	p, b, now := manualProgress()
	hits := uint64(5)
	p.stepCounting("counting in ./x (PID 7)", func() uint64 { return hits }, "hits")
	var target bytes.Buffer
	// write is the target's write, as the monitor reports it.
	write := func(s string) {
		p.enter(strings.HasSuffix(s, "\n"))
		b.Write([]byte(s))
		target.WriteString(s)
		p.leave()
	}
	at := func(d time.Duration) { *now = time.Unix(0, 0).Add(d); tickNow(p) }
	draw := func(s string, n uint64) string {
		return "\rpatchprof: counting in ./x (PID 7)... " + s + ", " + thousands(n) + " hits\x1b[K"
	}
	var want strings.Builder

	at(time.Second)
	want.WriteString(draw("1.0s", 5))
	write("one\n")
	want.WriteString("\r\x1b[Kone\n")
	at(1500 * time.Millisecond) // quiet for 0.5s only
	hits = 1234
	at(2600 * time.Millisecond)
	want.WriteString(draw("2.6s", 1234))
	write("name? ") // a prompt: the line is the target's until it ends
	want.WriteString("\r\x1b[Kname? ")
	at(5 * time.Second)
	at(9 * time.Second)
	write("ok\n")
	want.WriteString("ok\n")
	at(9500 * time.Millisecond)
	at(10100 * time.Millisecond)
	want.WriteString(draw("10.1s", 1234))
	// A read of the terminal: erased at its start, not drawn while it
	// waits, however long.
	p.enter(true)
	want.WriteString("\r\x1b[K")
	at(20 * time.Second)
	p.leave()
	at(20500 * time.Millisecond)
	at(21 * time.Second)
	want.WriteString(draw("21.0s", 1234))
	p.done()
	want.WriteString("\r\x1b[K")

	got := b.String()
	if got != want.String() {
		t.Errorf("terminal got\n%q\nwant\n%q", got, want.String())
	}
	if rest := progressDrawRE.ReplaceAllString(got, ""); rest != target.String() {
		t.Errorf("without the progress line the terminal shows %q, want the target's %q", rest, target.String())
	}
}

// TestProgressFreeTerminal: a target that never writes to the terminal
// leaves the line drawn every tick; one that writes before the line is
// drawn delays it by progressQuiet.
func TestProgressFreeTerminal(t *testing.T) {
	p, b, now := manualProgress()
	p.stepCounting("counting in ./x (PID 7)", func() uint64 { return 1 }, "hit")
	for _, d := range []time.Duration{1000, 1250, 1500} {
		*now = time.Unix(0, 0).Add(d * time.Millisecond)
		tickNow(p)
	}
	if n := strings.Count(b.String(), "\rpatchprof: counting"); n != 3 {
		t.Errorf("%d drawings in three ticks on a free terminal: %q", n, b.String())
	}

	p, b, now = manualProgress()
	p.stepCounting("counting", nil, "")
	*now = time.Unix(0, 0).Add(900 * time.Millisecond)
	p.enter(true)
	p.leave()
	for _, d := range []time.Duration{1000, 1250, 1500, 1750} {
		*now = time.Unix(0, 0).Add(d * time.Millisecond)
		tickNow(p)
	}
	if got := b.String(); got != "" {
		t.Errorf("drawn within %v of the target's write: %q", progressQuiet, got)
	}
	*now = time.Unix(0, 0).Add(2 * time.Second)
	tickNow(p)
	if got, want := b.String(), "\rpatchprof: counting... 2.0s\x1b[K"; got != want {
		t.Errorf("after the quiet period drew %q, want %q", got, want)
	}
	p.done()
	// A write between steps, with nothing drawn, writes nothing.
	p.enter(true)
	p.leave()
	if got := b.String(); got != "\rpatchprof: counting... 2.0s\x1b[K\r\x1b[K" {
		t.Errorf("after the step: %q", got)
	}
}

// TestProgressWidth: the line is cut to the terminal's width less one
// column, at a character boundary, so that it never wraps (one EL could
// not erase a wrapped line).
func TestProgressWidth(t *testing.T) {
	p, b, now := manualProgress()
	p.cols = func() int { return 21 }
	p.stepCounting("counting in ./é", nil, "")
	*now = time.Unix(0, 0).Add(time.Second)
	tickNow(p)
	if got, want := b.String(), "\rpatchprof: counting \x1b[K"; got != want {
		t.Errorf("on 21 columns drew %q, want %q", got, want)
	}
	p.cols = func() int { return 27 } // "é" would be cut in its middle
	tickNow(p)
	if got, want := b.String()[len("\rpatchprof: counting \x1b[K"):], "\rpatchprof: counting in ./\x1b[K"; got != want {
		t.Errorf("on 27 columns drew %q, want %q", got, want)
	}
}

// TestProgressTerminalHooks: only a progress that draws on a terminal asks
// the monitor about the target's writes.
func TestProgressTerminalHooks(t *testing.T) {
	p, _, _ := manualProgress()
	if p.terminal() != nil {
		t.Error("a progress on a buffer asks for terminal hooks")
	}
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := newProgress(f); p.enabled || p.terminal() != nil {
		t.Error("a progress on a regular file is enabled or asks for terminal hooks")
	}
}
