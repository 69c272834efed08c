//go:build linux

package integration

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// eventBound bounds the wait for an event a test needs (a line, a file, an
// exit): reached only when patchprof is broken, never on a slow machine.
const eventBound = 2 * time.Minute

// An ownRun is patchprof running oncommand.c (work() only when told, on a
// pipe the test holds), so a test knows where the target is when it sends
// patchprof a signal.
type ownRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser // the target's stdin
	lines  chan string    // the target's stdout, line by line; closed at EOF
	stderr *lockedBuffer
	done   chan struct{} // closed when patchprof has exited
}

// startOwn starts patchprof with args (the engine of the test binary
// added), the target's stdin and stdout piped to the test.
func startOwn(t *testing.T, args ...string) *ownRun {
	t.Helper()
	if e := os.Getenv(engineEnv); e != "" {
		args = append([]string{"--engine=" + e}, args...)
	}
	r := &ownRun{t: t, cmd: exec.Command(patchprofBin, args...), lines: make(chan string, 64), stderr: &lockedBuffer{}, done: make(chan struct{})}
	r.cmd.Stderr = r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	go func() {
		r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	})
	return r
}

// line returns the target's next line of output; ok is false at its end.
func (r *ownRun) line() (s string, ok bool) {
	r.t.Helper()
	select {
	case s, ok = <-r.lines:
		return s, ok
	case <-time.After(eventBound):
		r.t.Fatalf("no line from the target in %v\nstderr:\n%s", eventBound, r.stderr.String())
	}
	return "", false
}

// ask has the target call work() n times and returns its answer.
func (r *ownRun) ask(n int) string {
	r.t.Helper()
	fmt.Fprintf(r.in, "%d\n", n)
	s, ok := r.line()
	if !ok {
		r.t.Fatalf("the target ended instead of answering %d\nstderr:\n%s", n, r.stderr.String())
	}
	return s
}

// waitStderr waits until patchprof's stderr matches re, or patchprof
// exits; it reports whether it matched.
func (r *ownRun) waitStderr(re *regexp.Regexp) bool {
	r.t.Helper()
	deadline := time.After(eventBound)
	for {
		if re.MatchString(r.stderr.String()) {
			return true
		}
		select {
		case <-r.done:
			return re.MatchString(r.stderr.String())
		case <-deadline:
			r.t.Fatalf("stderr did not match %q in %v:\n%s", re, eventBound, r.stderr.String())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// wait waits for patchprof's exit and returns its exit code, -1 when a
// signal killed it.
func (r *ownRun) wait() int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(eventBound):
		r.t.Fatalf("patchprof still running after %v\nstderr:\n%s", eventBound, r.stderr.String())
	}
	return r.cmd.ProcessState.ExitCode()
}

// targetGone checks that no target outlived patchprof: the target holds
// its stdout, which ends only when the last process holding it exits.
func (r *ownRun) targetGone() {
	r.t.Helper()
	for {
		if _, ok := r.line(); !ok {
			return
		}
	}
}

// signal sends patchprof s.
func (r *ownRun) signal(s syscall.Signal) {
	if err := r.cmd.Process.Signal(s); err != nil {
		r.t.Fatalf("signal %v to patchprof: %v", s, err)
	}
}

// readingProgram waits until patchprof has the program at path open: it is
// reading it, and the target may or may not have started yet. It fails the
// test if patchprof ends first.
func (r *ownRun) readingProgram(path string) {
	r.t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", r.cmd.Process.Pid)
	deadline := time.After(eventBound)
	for {
		ents, _ := os.ReadDir(fds)
		for _, e := range ents {
			if l, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && l == path {
				return
			}
		}
		select {
		case <-r.done:
			r.t.Fatalf("patchprof ended before it opened %s:\n%s", path, r.stderr.String())
		case <-deadline:
			r.t.Fatalf("patchprof did not open %s in %v", path, eventBound)
		case <-time.After(200 * time.Microsecond):
		}
	}
}

var (
	// workCountRE is work's row in a listing's function table.
	workCountRE = regexp.MustCompile(`(?m)^ *(\d+)  work `)
	interimRE   = regexp.MustCompile(`is running: interim report`)
	finalRE     = regexp.MustCompile(`exited with code 0`)
)

// ownSignalPoints are the moments of a run at which the tests send
// patchprof a signal, each an event: the program open in patchprof (being
// read; the target perhaps not started), the target waiting for its first
// command, and the target having worked. The first is the earliest event
// left: patchprof refuses a FIFO as the program without opening it, so no
// test can hold it reading the program's header, and it reads nothing else
// the test could hold between catching its signals and starting the target.
var ownSignalPoints = []string{"reading", "ready", "worked"}

// reach brings the run to the point named, from its start.
func (r *ownRun) reach(point, exe string) {
	r.t.Helper()
	switch point {
	case "reading":
		r.readingProgram(exe)
	case "ready", "worked":
		if s, _ := r.line(); s != "ready" {
			r.t.Fatalf("target printed %q, want ready\nstderr:\n%s", s, r.stderr.String())
		}
		if point == "worked" {
			r.ask(100)
		}
	}
}

// signalNames are the names patchprof gives the signals the tests send.
var signalNames = map[syscall.Signal]string{
	syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP",
	syscall.SIGQUIT: "SIGQUIT", syscall.SIGUSR1: "SIGUSR1",
}

// TestOwnSignalsUSR1 sends SIGUSR1 at each point of a run, the earliest
// while patchprof reads the program: an interim report comes as soon as
// the target runs (a request made before is kept until then), and the run
// goes on to its end with exact counts.
func TestOwnSignalsUSR1(t *testing.T) {
	needs(t)
	exe := buildC(t, "oncommand.c", "-g", "-O0", "-pthread")
	for _, point := range ownSignalPoints {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			// No --save: it would take the interim report.
			r := startOwn(t, "--funcs", "--func", "^work$", exe)
			r.reach(point, exe)
			r.signal(syscall.SIGUSR1)
			if !r.waitStderr(interimRE) {
				t.Fatalf("patchprof ended with no interim report:\n%s", r.stderr.String())
			}
			if point == "reading" {
				if s, _ := r.line(); s != "ready" {
					t.Fatalf("target printed %q, want ready", s)
				}
			}
			if got := r.ask(1000); !strings.HasPrefix(got, "done 1000 ") {
				t.Fatalf("target answered %q", got)
			}
			r.in.Close()
			if code := r.wait(); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, r.stderr.String())
			}
			i, j := interimRE.FindStringIndex(r.stderr.String()), finalRE.FindStringIndex(r.stderr.String())
			if i == nil || j == nil || j[0] < i[0] {
				t.Errorf("want an interim report, then the final one:\n%s", r.stderr.String())
			}
			want := "1000"
			if point == "worked" {
				want = "1100"
			}
			counts := workCountRE.FindAllStringSubmatch(r.stderr.String(), -1)
			if len(counts) == 0 || counts[len(counts)-1][1] != want {
				t.Errorf("final report: work counted %v, want %s\n%s", counts, want, r.stderr.String())
			}
		})
	}
}

// TestOwnSignalsTerminate sends SIGINT, SIGTERM and SIGHUP at each point of
// a run: before the target starts, patchprof exits with 128+N and says so
// in one line; once it is starting or running, the signal is passed on and
// patchprof reports the target killed by it (128+N). Never is a target left
// behind, stopped or patched.
func TestOwnSignalsTerminate(t *testing.T) {
	needs(t)
	exe := buildC(t, "oncommand.c", "-g", "-O0", "-pthread")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		for _, point := range ownSignalPoints {
			t.Run(sig.String()+"/"+point, func(t *testing.T) {
				t.Parallel()
				r := startOwn(t, "--funcs", "--func", "^work$", exe)
				r.reach(point, exe)
				r.signal(sig)
				code := r.wait()
				r.targetGone()
				name := signalNames[sig]
				before := fmt.Sprintf("patchprof: %s before %s started: exiting\n", name, exe)
				killed := regexp.MustCompile(`patchprof: \S+ killed by ` + name + `\b`)
				out := r.stderr.String()
				switch {
				case code != 128+int(sig):
					t.Errorf("exit %d, want %d\n%s", code, 128+int(sig), out)
				case point == "reading" && out == before:
					t.Logf("the signal came before the target started")
				case !killed.MatchString(out) || !strings.Contains(out, "FUNCTION CALLS"):
					t.Errorf("want a report of the target killed by %s (or, while reading, %q):\n%s", name, before, out)
				}
			})
		}
	}
}

// TestOwnSignalsAtExit sends SIGUSR1 and SIGTERM the moment the final report
// is out, while patchprof still writes and exits: they are dropped, and
// patchprof exits with the target's status.
func TestOwnSignalsAtExit(t *testing.T) {
	needs(t)
	exe := buildC(t, "oncommand.c", "-g", "-O0", "-pthread")
	for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "report.txt")
			r := startOwn(t, "--lines", "-o", out, "--save", filepath.Join(t.TempDir(), "p.json"), exe)
			if s, _ := r.line(); s != "ready" {
				t.Fatalf("target printed %q, want ready", s)
			}
			r.in.Close()
			r.targetGone()
			// The target has ended: patchprof writes the profile and the
			// report now, or has just done so.
			_ = r.cmd.Process.Signal(sig)
			if code := r.wait(); code != 0 {
				t.Fatalf("exit %d, want the target's 0\n%s", code, r.stderr.String())
			}
		})
	}
}

// TestOwnSignalsAttachBefore sends SIGINT to patchprof -p PID while it
// reads the program, before or while it attaches: the process runs on,
// untouched or detached, to its normal end.
func TestOwnSignalsAttachBefore(t *testing.T) {
	needs(t)
	exe := buildC(t, "oncommand.c", "-g", "-O0", "-pthread")
	target, in, sc := startPiped(t, exe)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("target did not start: %q", sc.Text())
	}
	r := startOwn(t, "--funcs", "--func", "^work$", "-p", strconv.Itoa(target.Process.Pid))
	r.readingProgram(exe)
	r.signal(syscall.SIGINT)
	code := r.wait()
	before := fmt.Sprintf("patchprof: SIGINT before attaching to PID %d, which runs on untouched: exiting\n", target.Process.Pid)
	if out := r.stderr.String(); !(code == 130 && out == before) && !(code == 0 && strings.Contains(out, "detached")) {
		t.Errorf("exit %d, want 130 and %q, or 0 and a report of the detach:\n%s", code, before, out)
	}
	fmt.Fprintf(in, "300\n")
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "done 300 ") {
		t.Fatalf("target answered %q after patchprof ended", sc.Text())
	}
	in.Close()
	if err := target.Wait(); err != nil {
		t.Errorf("target: %v, want exit 0", err)
	}
}
