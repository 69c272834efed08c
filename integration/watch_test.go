//go:build linux

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// watchedCopy copies the built program exe into the test's own directory:
// a watch selects by the file, and the build is shared with other tests
// whose copies it must not find.
func watchedCopy(t *testing.T, exe string) string {
	t.Helper()
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(exe))
	if err := os.WriteFile(out, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// startWatch starts patchprof watch with args (the engine of the test
// binary added) and waits for its "serving" line when it listens. It
// returns the command, its stderr's lines and the endpoints' base URL.
func startWatch(t *testing.T, args ...string) (*exec.Cmd, *watchLines, string) {
	t.Helper()
	args = append([]string{"watch"}, args...)
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
	base := ""
	if slices.Contains(args, "--listen") {
		base = strings.TrimSuffix(wl.waitFor(t, regexp.MustCompile(`^patchprof: serving the watch at (http://\S+)`))[1], "/")
	}
	return pp, wl, base
}

// p0BuildID is the build ID of the aggregate saved at path.
func p0BuildID(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		BuildID string `json:"build_id"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.BuildID == "" {
		t.Fatalf("no build ID in %s: %v", path, err)
	}
	return p.BuildID
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
	exe := watchedCopy(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread"))
	targets := []*commandTarget{}
	for range 3 {
		c := startCommandTarget(t, exe)
		c.ask(t, 100) // before the watch: not counted
		targets = append(targets, c)
	}
	save := filepath.Join(t.TempDir(), "agg.json")
	pp, wl, base := startWatch(t, "--exe", exe, "--funcs", "--func", "^work$", "--save", save, "--listen", "127.0.0.1:0")
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

	// The endpoints read the aggregate of the moment, exact.
	_, metrics := getURL(t, base+"/metrics")
	for _, want := range []string{
		fmt.Sprintf(`patchprof_function_calls_total{module=%q,build_id=%q,function="work"} %d`, exe, p0BuildID(t, save), counted),
		"patchprof_watched_processes 3\n", "patchprof_attach_total 4\n", `patchprof_attach_failures_total{reason="already_traced"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, metrics)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		lint := exec.Command(promtool, "check", "metrics")
		lint.Stdin = strings.NewReader(metrics)
		if msg, err := lint.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s\n%s", err, msg, metrics)
		}
	}
	_, procs := getURL(t, base+"/processes")
	if !strings.Contains(procs, fmt.Sprintf(`"pid": %d,`, gone.cmd.Process.Pid)) || strings.Count(procs, `"watched": true`) != 3 {
		t.Errorf("/processes does not list the 4 copies, 3 watched:\n%s", procs)
	}
	// One process's counts, read by go tool pprof: the late copy's 4,000
	// calls, none of the others'.
	one := exec.Command("go", "tool", "pprof", "-sample_index=calls", "-top", fmt.Sprintf("%s/debug/pprof/counts?pid=%d", base, late.cmd.Process.Pid))
	one.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	if out, err := one.CombinedOutput(); err != nil || !regexp.MustCompile(`(?m)^\s+4000\s+100%\s+100%\s+4000\s+100%\s+work$`).Match(out) {
		t.Errorf("go tool pprof -top of /debug/pprof/counts?pid=%d has no row of 4000 calls of work (%v):\n%s", late.cmd.Process.Pid, err, out)
	}

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
		{[]string{"watch", "--save", save}, exitFailure, "one of --exe PATH, --cgroup PATH or --pid-file FILE"},
		{[]string{"watch", "--exe", "/bin/true", "--pid-file", text, "--save", save}, exitFailure, "one of --exe PATH, --cgroup PATH or --pid-file FILE"},
		{[]string{"watch", "--exe", "/bin/true"}, exitFailure, "give --save FILE"},
		{[]string{"watch", "--exe", filepath.Join(dir, "none"), "--save", save}, exitNotFound, "no such file"},
		{[]string{"watch", "--exe", text, "--save", save}, exitCannotRun, "not an ELF executable"},
		{[]string{"watch", "--cgroup", "/patchprof-test-none.slice", "--save", save}, exitFailure, "no such cgroup"},
		{[]string{"watch", "--exe", "/bin/true", "--save", save, "--max-procs", "0"}, exitFailure, "--max-procs 0"},
		{[]string{"watch", "--exe", "/bin/true", "--save", save, "/bin/true"}, exitFailure, "takes no program"},
	} {
		res := run(t, runOpts{args: c.args})
		if msg := oneLineErrorStatus(t, res, c.status); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q, want it to say %q", res.cmdline, msg, c.want)
		}
	}
}

// TestWatchPrometheus: a real Prometheus server scrapes a watch of two
// copies of a program, and reads patchprof_function_calls_total summed
// over both, exactly the calls made while attached.
func TestWatchPrometheus(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skipf("prometheus not found in PATH (%v): the test scrapes with a real Prometheus server (Debian package prometheus)", err)
	}
	exe := watchedCopy(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread"))
	a, b := startCommandTarget(t, exe), startCommandTarget(t, exe)
	a.ask(t, 50) // before the watch: not counted
	save := filepath.Join(t.TempDir(), "agg.json")
	pp, wl, base := startWatch(t, "--exe", exe, "--funcs", "--func", "^work$", "--save", save, "--listen", "127.0.0.1:0")
	wl.waitFor(t, watchAttachedRE)
	wl.waitFor(t, watchAttachedRE)
	waitFor := startPrometheus(t, prom, base)
	series := fmt.Sprintf(`patchprof_function_calls_total{job="patchprof",function="work",module=%q}`, exe)
	waitFor(`up{job="patchprof"}`, "1")
	waitFor(series, "0")
	a.ask(t, 1234)
	b.ask(t, 321)
	waitFor(series, "1555")
	waitFor(`patchprof_watched_processes{job="patchprof"}`, "2")
	pp.Process.Signal(syscall.SIGTERM)
	for range wl.lines {
	}
	if err := pp.Wait(); err != nil {
		t.Fatalf("patchprof watch: %v\n%s", err, wl.all.String())
	}
	for _, c := range []*commandTarget{a, b} {
		checkDetached(t, c.cmd.Process.Pid)
		c.ask(t, 1)
		c.end(t)
	}
}

// stopWatch sends SIGTERM to the watch, waits for it to exit 0 and
// returns the saved aggregate's count of work().
func stopWatch(t *testing.T, pp *exec.Cmd, wl *watchLines, save string) int64 {
	t.Helper()
	n, _ := funcCount(stopWatchProfile(t, pp, wl, save), "work")
	return n
}

// stopWatchProfile sends the watch SIGTERM, waits for it to exit 0 and
// returns the aggregate it saved at save.
func stopWatchProfile(t *testing.T, pp *exec.Cmd, wl *watchLines, save string) *profile {
	t.Helper()
	pp.Process.Signal(syscall.SIGTERM)
	for range wl.lines {
	}
	if err := pp.Wait(); err != nil {
		t.Fatalf("patchprof watch: %v\n%s", err, wl.all.String())
	}
	p, err := readProfile(save)
	if err != nil {
		t.Fatalf("%v\n%s", err, wl.all.String())
	}
	return p
}

// TestWatchMaxProcs: with --max-procs 1 the second copy is said to be
// left out, and is attached once the first ends; each is counted from its
// own attach, exactly.
func TestWatchMaxProcs(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := watchedCopy(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread"))
	byPID := map[int]*commandTarget{}
	for range 2 {
		c := startCommandTarget(t, exe)
		byPID[c.cmd.Process.Pid] = c
	}
	save := filepath.Join(t.TempDir(), "agg.json")
	pp, wl, _ := startWatch(t, "--exe", exe, "--funcs", "--func", "^work$", "--save", save, "--max-procs", "1")
	// Both said, in either order.
	either := regexp.MustCompile(`^patchprof: watch: (attached to|--max-procs 1 reached:) PID (\d+)`)
	var first, second int
	for first == 0 || second == 0 {
		m := wl.waitFor(t, either)
		pid, _ := strconv.Atoi(m[2])
		if m[1] == "attached to" {
			first = pid
		} else {
			second = pid
		}
	}
	a, b := byPID[first], byPID[second]
	if a == nil || b == nil || a == b {
		t.Fatalf("attached %d, left out %d; want one of each copy\n%s", first, second, wl.all.String())
	}
	a.ask(t, 1500)
	b.ask(t, 800) // not watched: not counted
	a.end(t)
	if pid, _ := strconv.Atoi(wl.waitFor(t, watchAttachedRE)[1]); pid != second {
		t.Fatalf("attached to PID %d once the first ended, want %d\n%s", pid, second, wl.all.String())
	}
	b.ask(t, 60)
	if n := stopWatch(t, pp, wl, save); n != 1500+60 {
		t.Errorf("work counted %d, want exactly 1560 (1500 in the first copy, 60 in the second once attached)\n%s", n, wl.all.String())
	}
	checkDetached(t, second)
	b.ask(t, 1)
	b.end(t)
}

// TestWatchPIDFile watches the process a pid file names, and says why a
// process already traced by someone else is not watched, leaving it to its
// tracer.
func TestWatchPIDFile(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := watchedCopy(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread"))
	dir := t.TempDir()

	c := startCommandTarget(t, exe)
	pidFile := filepath.Join(dir, "app.pid")
	os.WriteFile(pidFile, []byte(strconv.Itoa(c.cmd.Process.Pid)+"\n"), 0o644)
	save := filepath.Join(dir, "agg.json")
	pp, wl, _ := startWatch(t, "--pid-file", pidFile, "--funcs", "--func", "^work$", "--save", save)
	wl.waitFor(t, watchAttachedRE)
	c.ask(t, 300)
	if n := stopWatch(t, pp, wl, save); n != 300 {
		t.Errorf("work counted %d, want exactly 300\n%s", n, wl.all.String())
	}
	checkDetached(t, c.cmd.Process.Pid)

	// Now traced by another patchprof: refused, and said why.
	other, _ := startAttached(t, "--funcs", "--func", "^work$", "-p", strconv.Itoa(c.cmd.Process.Pid))
	pp, wl, _ = startWatch(t, "--pid-file", pidFile, "--funcs", "--save", filepath.Join(dir, "agg2.json"))
	wl.waitFor(t, regexp.MustCompile(fmt.Sprintf(`^patchprof: watch: PID %d not watched: .*already traced`, c.cmd.Process.Pid)))
	pp.Process.Signal(syscall.SIGTERM)
	for range wl.lines {
	}
	if err := pp.Wait(); err != nil {
		t.Fatalf("patchprof watch: %v\n%s", err, wl.all.String())
	}
	other.Process.Signal(syscall.SIGINT)
	if err := other.Wait(); err != nil {
		t.Fatalf("the other patchprof: %v", err)
	}
	checkDetached(t, c.cmd.Process.Pid)
	c.ask(t, 2)
	c.end(t)
}

// TestWatchExec: a process that execs into the watched program (a
// shell's exec, as a service's wrapper script does) is found by its new
// executable and counted from its attach.
func TestWatchExec(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := watchedCopy(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread"))
	save := filepath.Join(t.TempDir(), "agg.json")
	pp, wl, _ := startWatch(t, "--exe", exe, "--funcs", "--func", "^work$", "--save", save)
	wl.waitFor(t, regexp.MustCompile(`^patchprof: watch: watching `))
	// The shell reads one line (a byte at a time from a pipe), then
	// becomes the program.
	cmd, in, sc := startPiped(t, "/bin/sh", "-c", `read x; exec "$0"`, exe)
	fmt.Fprintln(in, "go")
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("the program did not start after the exec: %q", sc.Text())
	}
	c := &commandTarget{cmd: cmd, in: in, sc: sc}
	if pid, _ := strconv.Atoi(wl.waitFor(t, watchAttachedRE)[1]); pid != cmd.Process.Pid {
		t.Fatalf("attached to PID %d, want the exec'd shell's %d\n%s", pid, cmd.Process.Pid, wl.all.String())
	}
	c.ask(t, 4321)
	if n := stopWatch(t, pp, wl, save); n != 4321 {
		t.Errorf("work counted %d, want exactly 4321\n%s", n, wl.all.String())
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil && !strings.Contains(string(st), "TracerPid:\t0\n") {
		t.Errorf("a tracer is left on the program after the watch:\n%s", st)
	}
	c.ask(t, 3)
	c.end(t)
}
