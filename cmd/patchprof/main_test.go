package main

import (
	"strings"
	"testing"
)

// TestUsageErrors: every mistake on the command line is one line on stderr
// and exit status 2, before anything runs.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--bogus", "./x"},
		{"--print", "fancy", "./x"},
		{"--func", "(", "./x"},
		{"--file", "[", "./x"},
		{"--subst-path", "nofrom", "./x"},
		{"./does-not-exist"},
		{"no-such-program-in-path-xyz"},
		{"/"},
		{"-o", "/no/such/dir/r.txt", "./x"},
		{"--save", "/no/such/dir/p.json", "./x"},
		{"--save", "/tmp", "./x"},
		{"report"},
		{"report", "/does/not/exist.json"},
	} {
		var b strings.Builder
		if code := Main(args, &b); code != exitUsage {
			t.Errorf("Main(%q) = %d, want %d", args, code, exitUsage)
		}
		out := b.String()
		if !strings.HasPrefix(out, "patchprof: ") || strings.Count(out, "\n") != 1 {
			t.Errorf("Main(%q) printed %q, want one line starting \"patchprof: \"", args, out)
		}
	}
}
