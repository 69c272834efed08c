//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProgramNotRegular: a program path naming a FIFO (or a device) is
// refused from its mode, with 126 and one line, and never opened: opening
// a FIFO to read would wait for a writer that never comes.
func TestProgramNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "prog")
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ prog, kind string }{
		{fifo, "a FIFO"},
		{"/dev/null", "a character device"},
	} {
		type result struct {
			code int
			out  string
		}
		done := make(chan result, 1)
		go func() {
			var b strings.Builder
			code := Main([]string{"--funcs", tc.prog}, &b)
			done <- result{code, b.String()}
		}()
		select {
		case r := <-done:
			want := "patchprof: " + tc.prog + " is not a regular file (" + tc.kind + "): give the program's path\n"
			if r.code != exitCannotRun || r.out != want {
				t.Errorf("Main(%s): exit %d, printed %q; want %d and %q", tc.prog, r.code, r.out, exitCannotRun, want)
			}
		case <-time.After(time.Minute): // a hang bound: the answer needs no I/O
			t.Fatalf("Main(%s) still running after a minute: it opened the program", tc.prog)
		}
	}
}
