package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFormatFlagErrors: a bad --format, --color, --fold or --top, and a
// compressed export without -o, are one line on stderr and exit 125.
func TestFormatFlagErrors(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(saved, []byte(`{"version": 2, "executable": "/x", "args": ["x"], "mode": "lines",
		"exit": {"code": 0}, "lines": [], "functions": [], "sites": []}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--format", "xml", saved}, `--format "xml": use listing, gcov, gcov-json, lcov, pprof, cobertura, html, callgrind`},
		{[]string{"report", "--color", "yes", saved}, `--color "yes": use auto, always or never`},
		{[]string{"report", "--fold", "sometimes", saved}, `--fold "sometimes": use auto, always or never`},
		{[]string{"report", "--top", "-3", saved}, `--top -3: give a positive number of lines`},
		{[]string{"report", "--format", "gcov-json", saved}, `--format gcov-json writes a compressed file: give -o FILE`},
		{[]string{"report", "--format", "pprof", saved}, `--format pprof writes a compressed file: give -o FILE`},
		{[]string{"--format", "html", "./x"}, `--format html: give -o PATH (the target's output goes to stdout)`},
	} {
		var b strings.Builder
		if code := Main(tc.args, &b); code != exitFailure {
			t.Errorf("Main(%q) = %d, want %d", tc.args, code, exitFailure)
		}
		if got := b.String(); got != "patchprof: "+tc.want+"\n" {
			t.Errorf("Main(%q) printed %q, want %q", tc.args, got, "patchprof: "+tc.want+"\n")
		}
	}
}

// TestReportColorAlways: --color=always colours the listing even in a
// file; --color=never and a file (auto) do not.
func TestReportColorAlways(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	if err := os.WriteFile(src, []byte("int main(void)\n{\n\treturn 0;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(dir, "p.json")
	if err := os.WriteFile(saved, []byte(`{"version": 2, "executable": "/x", "args": ["x"], "mode": "lines",
		"exit": {"code": 0}, "lines": [{"file": "`+src+`", "line": 2, "count": 1}, {"file": "`+src+`", "line": 3, "count": 0}],
		"functions": [], "sites": []}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		color string
		want  string
	}{
		{"always", "\x1b[1;31m1\x1b[0m: {\n"},
		{"never", "      1: {\n"},
		{"auto", "      1: {\n"},
	} {
		out := filepath.Join(dir, "r-"+tc.color+".txt")
		var b strings.Builder
		if code := Main([]string{"report", "--color", tc.color, "-o", out, saved}, &b); code != 0 {
			t.Fatalf("report --color %s: exit %d: %s", tc.color, code, b.String())
		}
		text, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), tc.want) {
			t.Errorf("--color %s: listing lacks %q:\n%s", tc.color, tc.want, text)
		}
		if tc.color != "always" && bytes.ContainsRune(text, 0x1b) {
			t.Errorf("--color %s: escape sequences in a file:\n%q", tc.color, text)
		}
	}
}

// TestProgress draws the progress line only after progressDelay, redraws it
// in place, and erases it before anything else is written. The test drives
// the progress's timers (drivenProgress): what is drawn does not depend on
// how loaded the machine is.
func TestProgress(t *testing.T) {
	b := new(syncBuffer)
	p := newProgress(b)
	if p.enabled {
		t.Fatal("a progress on a buffer is enabled; want it only on a terminal")
	}
	p.after = func(time.Duration) <-chan time.Time {
		t.Error("a disabled progress waits to draw")
		return nil
	}
	p.step("reading ./x")
	p.Write([]byte("patchprof: done\n"))
	if got := b.String(); got != "patchprof: done\n" {
		t.Errorf("a disabled progress wrote %q", got)
	}

	p, b, fire := drivenProgress(t)
	now := time.Unix(0, 0)
	p.now = func() time.Time { now = now.Add(700 * time.Millisecond); return now }
	p.step("planting 9 sites in ./x")
	fire(true)
	p.Write([]byte("patchprof: attached\n"))
	got := b.String()
	if !strings.HasPrefix(got, "\rpatchprof: planting 9 sites in ./x... 0.7s\x1b[K") ||
		!strings.HasSuffix(got, "\r\x1b[Kpatchprof: attached\n") {
		t.Errorf("progress wrote %q", got)
	}
	p.step("quick")
	fire(false)
	p.done()
	if b.String() != got {
		t.Errorf("a step shorter than %v drew %q", progressDelay, b.String()[len(got):])
	}
}

// drivenProgress returns an enabled progress on a buffer whose timers the
// test drives with fire: it checks that the current step waits progressDelay
// before its first drawing and, with draw, ends that wait and returns once
// the line is drawn (the progress then waits progressTick to redraw it).
func drivenProgress(t *testing.T) (p *progress, b *syncBuffer, fire func(draw bool)) {
	b = new(syncBuffer)
	p = newProgress(b)
	p.enabled = true
	waits, ends := make(chan time.Duration, 16), make(chan time.Time)
	p.after = func(d time.Duration) <-chan time.Time { waits <- d; return ends }
	waited := func(want time.Duration) {
		t.Helper()
		select {
		case d := <-waits:
			if d != want {
				t.Fatalf("the progress waits %v, want %v", d, want)
			}
		case <-time.After(2 * time.Minute): // only a hang
			t.Fatalf("the progress did not wait for %v", want)
		}
	}
	fire = func(draw bool) {
		t.Helper()
		waited(progressDelay)
		if draw {
			ends <- time.Time{}
			waited(progressTick) // asked for after the drawing
		}
	}
	return p, b, fire
}

// syncBuffer is a bytes.Buffer safe for the progress goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(b)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// TestProgressCounting: an attached run's progress line shows the hits so
// far after the elapsed time, with thousands separators.
func TestProgressCounting(t *testing.T) {
	p, b, fire := drivenProgress(t)
	now := time.Unix(0, 0)
	p.now = func() time.Time { now = now.Add(1500 * time.Millisecond); return now }
	var hits atomic.Uint64
	hits.Store(1234567)
	p.stepCounting("counting in PID 42", hits.Load, "hits")
	fire(true)
	p.done()
	if got, want := b.String(), "\rpatchprof: counting in PID 42... 1.5s, 1,234,567 hits\x1b[K"; !strings.HasPrefix(got, want) {
		t.Errorf("progress wrote %q, want it to start with %q", got, want)
	}
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
