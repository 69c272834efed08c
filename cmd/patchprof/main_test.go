package main

import (
	"flag"
	"slices"
	"strings"
	"testing"
)

// TestUsageErrors: every mistake on the command line is one line on stderr,
// before anything runs, and the status env(1) would give: 127 for a
// program not found, 126 for one that cannot be run, 125 for the rest.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{}, exitFailure},
		{[]string{"--bogus", "./x"}, exitFailure},
		{[]string{"--print", "fancy", "./x"}, exitFailure},
		{[]string{"--func", "(", "./x"}, exitFailure},
		{[]string{"--file", "[", "./x"}, exitFailure},
		{[]string{"--subst-path", "nofrom", "./x"}, exitFailure},
		{[]string{"./does-not-exist"}, exitNotFound},
		{[]string{"no-such-program-in-path-xyz"}, exitNotFound},
		{[]string{"/"}, exitCannotRun},
		{[]string{"-o", "/no/such/dir/r.txt", "./x"}, exitFailure},
		{[]string{"--save", "/no/such/dir/p.json", "./x"}, exitFailure},
		{[]string{"--save", "/tmp", "./x"}, exitFailure},
		{[]string{"-p", "0"}, exitFailure},
		{[]string{"-p0"}, exitFailure},
		{[]string{"-p", "-5"}, exitFailure},
		{[]string{"report"}, exitFailure},
		{[]string{"report", "/does/not/exist.json"}, exitFailure},
	} {
		var b strings.Builder
		if code := Main(tc.args, &b); code != tc.want {
			t.Errorf("Main(%q) = %d, want %d", tc.args, code, tc.want)
		}
		out := b.String()
		if !strings.HasPrefix(out, "patchprof: ") || strings.Count(out, "\n") != 1 {
			t.Errorf("Main(%q) printed %q, want one line starting \"patchprof: \"", tc.args, out)
		}
	}
}

// TestPIDZero: -p 0 is a bad process ID, not a missing program.
func TestPIDZero(t *testing.T) {
	for _, args := range [][]string{{"-p", "0"}, {"-p0"}, {"--p=0"}} {
		var b strings.Builder
		Main(args, &b)
		if want := "patchprof: -p 0: -p needs a process ID greater than 0\n"; b.String() != want {
			t.Errorf("Main(%q) printed %q, want %q", args, b.String(), want)
		}
	}
}

// TestAttachedPID: strace's -pPID is patchprof's -p PID; the target's own
// arguments are never rewritten.
func TestAttachedPID(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Int("p", 0, "")
	fs.String("o", "", "")
	fs.Bool("funcs", false, "")
	fs.Bool("pin", true, "")
	for _, tc := range []struct{ in, want []string }{
		{[]string{"-p1234"}, []string{"-p", "1234"}},
		{[]string{"--funcs", "--p1234", "-o", "r.txt"}, []string{"--funcs", "-p", "1234", "-o", "r.txt"}},
		{[]string{"-o", "-p5", "-p7"}, []string{"-o", "-p5", "-p", "7"}},
		{[]string{"--pin", "./prog", "-p5"}, []string{"--pin", "./prog", "-p5"}},
		{[]string{"--", "-p5"}, []string{"--", "-p5"}},
		{[]string{"-pin=false", "-p12"}, []string{"-pin=false", "-p", "12"}},
		{[]string{"-px"}, []string{"-px"}},
	} {
		if got := attachedPID(fs, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("attachedPID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
