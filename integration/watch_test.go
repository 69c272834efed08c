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

// A commandTarget is one running copy of oncommand.c: it calls work() only
// when told, and answers with its own total.
type commandTarget struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	sc    *bufio.Scanner
	total int // work()'s calls so far, by the target's own count
}

// startCommandTarget starts exe (oncommand.c), waits for its "ready" and
// records, after a first command of no calls, its signal dispositions and code mappings for checkDetached.
func startCommandTarget(t *testing.T, exe string) *commandTarget {
	t.Helper()
	cmd, in, sc := startPiped(t, exe)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("target did not start: %q", sc.Text())
	}
	c := &commandTarget{cmd: cmd, in: in, sc: sc}
	// The first command starts threads, and glibc then sets its own
	// handlers (SIGSETXID): done before the state is recorded.
	c.ask(t, 0)
	pid := cmd.Process.Pid
	codeMaps.Store(pid, execMappings(t, pid))
	sigMaps.Store(pid, dispositions(t, pid))
	return c
}

// ask makes the target call work() n times and checks its answer.
func (c *commandTarget) ask(t *testing.T, n int) {
	t.Helper()
	fmt.Fprintf(c.in, "%d\n", n)
	if !c.sc.Scan() {
		t.Fatalf("PID %d did not answer %d: %v", c.cmd.Process.Pid, n, c.sc.Err())
	}
	c.total += n
	if want := fmt.Sprintf("done %d %d", n, c.total); c.sc.Text() != want {
		t.Fatalf("PID %d answered %q, want %q", c.cmd.Process.Pid, c.sc.Text(), want)
	}
}

// end closes the target's stdin and waits for it to exit 0.
func (c *commandTarget) end(t *testing.T) {
	t.Helper()
	c.in.Close()
	if err := c.cmd.Wait(); err != nil {
		t.Errorf("PID %d: %v (want exit 0)", c.cmd.Process.Pid, err)
	}
}

// watchLines follows a patchprof watch's stderr: every line is kept for
// failure messages, and each is offered to the waiter.
type watchLines struct {
	lines chan string
	all   *lockedBuffer
}

func followWatch(r io.Reader) *watchLines {
	w := &watchLines{lines: make(chan string, 100), all: &lockedBuffer{}}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			w.all.Write([]byte(sc.Text() + "\n"))
			w.lines <- sc.Text()
		}
	}()
	return w
}

// waitFor waits for a line matching re and returns its submatches. The
// bound only keeps a broken watch from hanging the test.
func (w *watchLines) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				t.Fatalf("patchprof watch ended before a line matching %s:\n%s", re, w.all.String())
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-timeout:
			t.Fatalf("no line matching %s from patchprof watch:\n%s", re, w.all.String())
		}
	}
}

var watchAttachedRE = regexp.MustCompile(`^patchprof: watch: attached to PID (\d+) at `)

// TestWatchExe watches every copy of a program by its executable: three
// copies running before the watch, a fourth started during it, one that
// exits meanwhile. The aggregate counts exactly the calls made in each
// copy while it was attached (the targets' own counts say how many they
// made, and when), SIGUSR1 writes it at once, and after SIGTERM every copy
// left runs on as found.
func TestWatchExe(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := buildC(t, "oncommand.c", "-g", "-O0", "-pthread")
	targets := []*commandTarget{}
	for range 3 {
		c := startCommandTarget(t, exe)
		c.ask(t, 100) // before the watch: not counted
		targets = append(targets, c)
	}
	save := filepath.Join(t.TempDir(), "agg.json")
	args := []string{"watch", "--exe", exe, "--funcs", "--func", "^work$", "--save", save}
	if e := os.Getenv(engineEnv); e != "" {
		args = append(args, "--engine="+e)
	}
	pp := exec.Command(patchprofBin, args...)
	perr, err := pp.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pp.Process.Kill(); pp.Wait() })
	wl := followWatch(perr)
	attached := map[int]bool{}
	for range 3 {
		pid, _ := strconv.Atoi(wl.waitFor(t, watchAttachedRE)[1])
		attached[pid] = true
	}
	for _, c := range targets {
		if !attached[c.cmd.Process.Pid] {
			t.Fatalf("PID %d not attached; attached: %v\n%s", c.cmd.Process.Pid, attached, wl.all.String())
		}
	}
	counted := 0
	for i, c := range targets {
		c.ask(t, 1000*(i+1))
		counted += 1000 * (i + 1)
	}

	// A copy started while watching is found and attached.
	late := startCommandTarget(t, exe)
	if pid, _ := strconv.Atoi(wl.waitFor(t, watchAttachedRE)[1]); pid != late.cmd.Process.Pid {
		t.Fatalf("attached to PID %d, want the new copy's %d\n%s", pid, late.cmd.Process.Pid, wl.all.String())
	}
	late.ask(t, 4000)
	counted += 4000

	// A copy that exits is let go of, its counts kept.
	gone := targets[0]
	gone.end(t)
	wl.waitFor(t, regexp.MustCompile(fmt.Sprintf(`^patchprof: watch: PID %d ended; its counts kept`, gone.cmd.Process.Pid)))
	targets = append(targets[1:], late)
	targets[0].ask(t, 500)
	counted += 500

	// SIGUSR1 writes the aggregate of the moment: exact, as at the end.
	pp.Process.Signal(syscall.SIGUSR1)
	deadline := time.Now().Add(2 * time.Minute) // only a guard against a hang
	for {
		if p, err := readProfile(save); err == nil {
			if n, ok := funcCount(p, "work"); !ok || n != int64(counted) {
				t.Errorf("on SIGUSR1 work counted %d (%v), want exactly %d", n, ok, counted)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no aggregate written on SIGUSR1:\n%s", wl.all.String())
		}
		time.Sleep(10 * time.Millisecond) // waiting for the file, not timing
	}
	targets[1].ask(t, 250)
	counted += 250

	pp.Process.Signal(syscall.SIGTERM)
	for range wl.lines {
	}
	if err := pp.Wait(); err != nil {
		t.Fatalf("patchprof watch: %v\n%s", err, wl.all.String())
	}
	p, err := readProfile(save)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := funcCount(p, "work"); !ok || n != int64(counted) {
		t.Errorf("work counted %d (%v) over the watched copies, want exactly %d\n%s", n, ok, counted, wl.all.String())
	}
	for _, pid := range []int{gone.cmd.Process.Pid, late.cmd.Process.Pid} {
		if !strings.Contains(strings.Join(p.Notes, "\n"), fmt.Sprintf("PID %d: counted from its attach at ", pid)) {
			t.Errorf("the aggregate's notes do not say when PID %d was attached:\n%s", pid, strings.Join(p.Notes, "\n"))
		}
	}
	// Every copy left runs on as found, untraced, and works.
	for _, c := range targets {
		checkDetached(t, c.cmd.Process.Pid)
		c.ask(t, 7)
		c.end(t)
	}
}

// TestWatchUserErrors: a watch without what to watch, or with a bad
// selector, says in one line what to give, and exits 125.
func TestWatchUserErrors(t *testing.T) {
	dir := t.TempDir()
	save := filepath.Join(dir, "agg.json")
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("not a program\n"), 0o755)
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"watch", "--save", save}, exitFailure, "one of --exe PATH or --pid-file FILE"},
		{[]string{"watch", "--exe", "/bin/true", "--pid-file", text, "--save", save}, exitFailure, "one of --exe PATH or --pid-file FILE"},
		{[]string{"watch", "--exe", "/bin/true"}, exitFailure, "give --save FILE"},
		{[]string{"watch", "--exe", filepath.Join(dir, "none"), "--save", save}, exitNotFound, "no such file"},
		{[]string{"watch", "--exe", text, "--save", save}, exitCannotRun, "not an ELF executable"},
		{[]string{"watch", "--exe", "/bin/true", "--save", save, "--max-procs", "0"}, exitFailure, "--max-procs 0"},
		{[]string{"watch", "--exe", "/bin/true", "--save", save, "/bin/true"}, exitFailure, "takes no program"},
	} {
		res := run(t, runOpts{args: c.args})
		if msg := oneLineErrorStatus(t, res, c.status); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q, want it to say %q", res.cmdline, msg, c.want)
		}
	}
}
