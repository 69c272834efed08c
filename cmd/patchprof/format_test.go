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
		{[]string{"report", "--format", "xml", saved}, `--format "xml": use listing, gcov, gcov-json, lcov, pprof, cobertura, html`},
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
// in place, and erases it before anything else is written.
func TestProgress(t *testing.T) {
	b := new(syncBuffer)
	p := newProgress(b)
	if p.enabled {
		t.Fatal("a progress on a buffer is enabled; want it only on a terminal")
	}
	p.step("reading ./x")
	time.Sleep(progressDelay + progressTick)
	p.Write([]byte("patchprof: done\n"))
	if got := b.String(); got != "patchprof: done\n" {
		t.Errorf("a disabled progress wrote %q", got)
	}

	b = new(syncBuffer)
	p = newProgress(b)
	p.enabled = true
	now := time.Unix(0, 0)
	p.now = func() time.Time { now = now.Add(700 * time.Millisecond); return now }
	p.step("planting 9 sites in ./x")
	// Wait for the first drawing, however loaded the machine is: the test
	// is about what is drawn, not when.
	for deadline := time.Now().Add(30 * time.Second); !strings.HasPrefix(b.String(), "\rpatchprof: planting") && time.Now().Before(deadline); {
		time.Sleep(progressTick / 4)
	}
	p.Write([]byte("patchprof: attached\n"))
	got := b.String()
	if !strings.HasPrefix(got, "\rpatchprof: planting 9 sites in ./x... 0.7s\x1b[K") ||
		!strings.HasSuffix(got, "\r\x1b[Kpatchprof: attached\n") {
		t.Errorf("progress wrote %q", got)
	}
	p.step("quick")
	p.done()
	if b.String() != got {
		t.Errorf("a step shorter than %v drew %q", progressDelay, b.String()[len(got):])
	}
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
	b := new(syncBuffer)
	p := newProgress(b)
	p.enabled = true
	now := time.Unix(0, 0)
	p.now = func() time.Time { now = now.Add(1500 * time.Millisecond); return now }
	var hits atomic.Uint64
	hits.Store(1234567)
	p.stepCounting("counting in PID 42", hits.Load, "hits")
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(b.String(), "hits") && time.Now().Before(deadline); {
		time.Sleep(progressTick / 4)
	}
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
