//go:build linux

package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// progressRE matches what patchprof's progress line writes on a terminal: a
// drawing (the text in group 1), or an erasure.
var progressRE = regexp.MustCompile("\r(patchprof: [^\r\n\x1b]*)?\x1b\\[K")

// countingRE matches a drawing of a run's progress; group 1 is the hits.
var countingRE = regexp.MustCompile(`^patchprof: counting in \S+ \(PID \d+\)\.\.\. \d+\.\ds, ([\d,]+) hits$`)

// TestProgressSharesTerminal runs a target on the same terminal as
// patchprof (a pseudo-terminal): the progress line with the hits so far
// shows while the target computes, is erased before each of the target's
// writes and is never drawn over its unfinished prompt, and the target's
// bytes reach the terminal exactly as it wrote them.
func TestProgressSharesTerminal(t *testing.T) {
	needs(t)
	prog := buildC(t, "slowlines.c", "-g", "-O0")
	report := filepath.Join(t.TempDir(), "report.txt")
	screen, code := runOnTerminal(t, "-o", report, "--", prog)
	if code != 0 {
		t.Fatalf("exit code %d; the terminal showed %q", code, screen)
	}

	// The target's text, with where each drawing came in it.
	var target strings.Builder
	var draws []int // offsets into target
	last, shown := 0, false
	for _, m := range progressRE.FindAllStringSubmatchIndex(screen, -1) {
		if m[0] > last && shown {
			t.Errorf("the target wrote %q after the progress line, not erased first", screen[last:m[0]])
		}
		target.WriteString(screen[last:m[0]])
		last, shown = m[1], m[2] >= 0
		if !shown {
			continue
		}
		line := screen[m[2]:m[3]]
		c := countingRE.FindStringSubmatch(line)
		if c == nil {
			t.Errorf("unexpected progress line %q", line)
			continue
		}
		if n, err := strconv.ParseUint(strings.ReplaceAll(c[1], ",", ""), 10, 64); err != nil || n == 0 {
			t.Errorf("progress line %q: want a positive count of hits", line)
		}
		draws = append(draws, target.Len())
	}
	if last < len(screen) && shown {
		t.Errorf("the target wrote %q after the progress line, not erased first", screen[last:])
	}
	target.WriteString(screen[last:])

	var want strings.Builder
	for i := 1; i <= 8; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&want, "line %d via writev\n", i)
		case 1:
			fmt.Fprintf(&want, "line %d on stdout\n", i)
		default:
			fmt.Fprintf(&want, "line %d on stderr\n", i)
		}
	}
	want.WriteString("prompt> done\n")
	got := target.String()
	if got != want.String() {
		t.Fatalf("without the progress line the terminal showed\n%q\nwant the target's bytes\n%q\n(all: %q)", got, want.String(), screen)
	}

	// Never drawn over an unfinished line (the prompt, however long the
	// target computes after it). When the line comes back after a write
	// depends on how the machine schedules the target: the quiet period
	// is TestProgressSharedTerminal's, on a clock of its own.
	if len(draws) == 0 {
		t.Errorf("no progress line while the target computed for seconds; the terminal showed %q", screen)
	}
	for _, at := range draws {
		if at > 0 && got[at-1] != '\n' {
			t.Errorf("progress drawn over the target's unfinished line %q", got[strings.LastIndex(got[:at], "\n")+1:at])
		}
	}
}

// runOnTerminal runs patchprof with args on a new pseudo-terminal, its
// controlling terminal and all three of its standard descriptors, and
// returns everything written to the terminal and patchprof's exit code.
// Output post-processing (\n to \r\n) is off, so the bytes are as written.
func runOnTerminal(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ptm, pts, err := openPTY()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	defer ptm.Close()
	if e := os.Getenv(engineEnv); e != "" {
		args = append([]string{"--engine=" + e}, args...)
	}
	cmd := exec.Command(patchprofBin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	pts.Close()
	if err != nil {
		t.Fatalf("start patchprof: %v", err)
	}
	out := make(chan string, 1)
	go func() {
		// Reading ends with EIO once no process has the terminal open.
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				out <- b.String()
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(runTimeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("patchprof %s: still running after %v; killed", shellQuote(args), runTimeout)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("patchprof %s: %v", shellQuote(args), err)
	}
	select {
	case s := <-out:
		return s, cmd.ProcessState.ExitCode()
	case <-time.After(eventBound):
		t.Fatalf("the terminal stayed open %v after patchprof ended", eventBound)
		return "", 0
	}
}

// openPTY opens a pseudo-terminal pair (pty(7): posix_openpt, unlockpt,
// ptsname) with output post-processing and echo off on its terminal side.
func openPTY() (ptm, pts *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	ptm = os.NewFile(uintptr(fd), "/dev/ptmx")
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0)
	}
	if err == nil {
		pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	}
	if err == nil {
		var tio *unix.Termios
		if tio, err = unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS); err == nil {
			tio.Oflag &^= unix.OPOST
			tio.Lflag &^= unix.ECHO
			err = unix.IoctlSetTermios(int(pts.Fd()), unix.TCSETS, tio)
		}
	}
	if err != nil {
		ptm.Close()
		if pts != nil {
			pts.Close()
		}
		return nil, nil, err
	}
	return ptm, pts, nil
}
