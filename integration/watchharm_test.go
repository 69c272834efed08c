//go:build linux

package integration

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatchKilled: patchprof watch killed with SIGKILL leaves every
// watched process as it found it. Its children (patchprof -p) are sent
// SIGTERM at their parent's death, detach and put back every byte: each
// process runs on untraced, with its code mappings and signal
// dispositions as before, and answers as it did.
func TestWatchKilled(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := watchedCopy(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread"))
	cs := []*commandTarget{startCommandTarget(t, exe), startCommandTarget(t, exe)}
	save := filepath.Join(t.TempDir(), "agg.json")
	pp, wl, _ := startWatch(t, "--exe", exe, "--funcs", "--func", "^work$", "--save", save)
	for range cs {
		wl.waitFor(t, watchAttachedRE)
	}
	cs[0].ask(t, 5) // counted, and lost with the watch
	if err := pp.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	pp.Wait()
	for _, c := range cs {
		pid := c.cmd.Process.Pid
		waitUntraced(t, pid)
		checkDetached(t, pid)
		c.ask(t, 7)
		c.end(t)
	}
}

// waitUntraced waits until process pid has no tracer, failing the test
// if it keeps one for a minute (the watch's children detach within
// milliseconds on an idle machine).
func waitUntraced(t *testing.T, pid int) {
	t.Helper()
	path := fmt.Sprintf("/proc/%d/status", pid)
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("PID %d: %v", pid, err)
		}
		if strings.Contains(string(st), "TracerPid:\t0\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PID %d is still traced a minute after patchprof watch was killed:\n%s", pid, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchTargetKilled: a watched process killed by SIGKILL is let go
// of with the counts it made, the watch goes on, and a process started
// after it is attached and counted: the aggregate is the sum, exactly.
func TestWatchTargetKilled(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := watchedCopy(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread"))
	save := filepath.Join(t.TempDir(), "agg.json")
	pp, wl, _ := startWatch(t, "--exe", exe, "--funcs", "--func", "^work$", "--save", save)
	wl.waitFor(t, regexp.MustCompile(`^patchprof: watch: watching `))
	first := startCommandTarget(t, exe)
	waitAttached(t, wl, first.cmd.Process.Pid)
	first.ask(t, 250)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.cmd.Wait()
	if pid, _ := strconv.Atoi(wl.waitFor(t, watchEndedRE)[1]); pid != first.cmd.Process.Pid {
		t.Fatalf("PID %d ended, want %d\n%s", pid, first.cmd.Process.Pid, wl.all.String())
	}
	second := startCommandTarget(t, exe)
	waitAttached(t, wl, second.cmd.Process.Pid)
	second.ask(t, 40)
	if n := stopWatch(t, pp, wl, save); n != 290 {
		t.Errorf("work counted %d over the two processes, want exactly 290 (250 before the SIGKILL, 40)\n%s", n, wl.all.String())
	}
	// Started while watched: its state before the attach is unknown here
	// (TestWatchKilled checks a whole detach); it runs on untraced.
	waitUntraced(t, second.cmd.Process.Pid)
	second.ask(t, 1)
	second.end(t)
}

// TestWatchReplacedBinary: a deploy replaces the watched file (a new
// build renamed over the path) while a process of the old one runs. The
// watch goes on counting the old process, attaches to a process of the
// new file, and keeps the two builds apart by build ID: the aggregate of
// the build found last at the path, the earlier beside it as
// FILE.BUILDID, each exact.
func TestWatchReplacedBinary(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	const id1, id2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	v1 := buildC(t, "oncommand.c", "-g", "-O0", "-pthread", "-Wl,--build-id=0x"+id1)
	v2 := buildC(t, "oncommand.c", "-g", "-O0", "-pthread", "-Wl,--build-id=0x"+id2)
	path := filepath.Join(t.TempDir(), "served")
	deploy := deployer(t, path)
	deploy(v1)
	old := startCommandTarget(t, path)
	save := filepath.Join(t.TempDir(), "agg.json")
	pp, wl, _ := startWatch(t, "--exe", path, "--funcs", "--func", "^work$", "--save", save)
	waitAttached(t, wl, old.cmd.Process.Pid)
	old.ask(t, 100)
	deploy(v2)
	cur := startCommandTarget(t, path)
	waitAttached(t, wl, cur.cmd.Process.Pid)
	cur.ask(t, 200)
	old.ask(t, 30)
	if n := stopWatch(t, pp, wl, save); n != 200 {
		t.Errorf("the new build's work counted %d, want exactly 200\n%s", n, wl.all.String())
	}
	p, err := readProfile(save + "." + id1[:16])
	if err != nil {
		t.Fatalf("the earlier build's aggregate: %v\n%s", err, wl.all.String())
	}
	if n, ok := funcCount(p, "work"); !ok || n != 130 {
		t.Errorf("the earlier build's work counted %d (%v), want exactly 130\n%s", n, ok, wl.all.String())
	}
	for _, c := range []*commandTarget{old, cur} {
		waitUntraced(t, c.cmd.Process.Pid)
		c.ask(t, 1)
		c.end(t)
	}
}

// TestWatchExecAway: a watched process that execs into another program
// is followed, as a launch follows an exec: the aggregate of the watched
// program's build keeps the calls made before the exec in its own code,
// exact, and the other program's calls apart, as a module of its own;
// the process runs on, untraced after the watch.
func TestWatchExecAway(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	a := watchedCopy(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread", "-Wl,--build-id=0x3333333333333333333333333333333333333333"))
	b := watchedCopy(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread", "-Wl,--build-id=0x4444444444444444444444444444444444444444"))
	c := startCommandTarget(t, a)
	save := filepath.Join(t.TempDir(), "agg.json")
	pp, wl, _ := startWatch(t, "--exe", a, "--funcs", "--func", "^work$", "--save", save)
	waitAttached(t, wl, c.cmd.Process.Pid)
	c.ask(t, 50)
	fmt.Fprintf(c.in, "exec %s\n", b)
	if !c.sc.Scan() || c.sc.Text() != "ready" {
		t.Fatalf("the other program did not start after the exec: %q\n%s", c.sc.Text(), wl.all.String())
	}
	c.total = 0 // the other program's own count
	c.ask(t, 20)
	p := stopWatchProfile(t, pp, wl, save)
	got := map[string]int64{}
	for _, f := range p.Functions {
		if f.Name == "work" {
			got[f.Module] += f.Count
		}
	}
	if want := map[string]int64{"": 50, b: 20}; !maps.Equal(got, want) {
		t.Errorf("work counted %v by module (\"\": the watched program), want %v\n%s", got, want, wl.all.String())
	}
	waitUntraced(t, c.cmd.Process.Pid)
	c.ask(t, 1)
	c.end(t)
}

// waitAttached waits for the watch's next attach and fails the test
// unless it is to pid.
func waitAttached(t *testing.T, wl *watchLines, pid int) {
	t.Helper()
	if got, _ := strconv.Atoi(wl.waitFor(t, watchAttachedRE)[1]); got != pid {
		t.Fatalf("attached to PID %d, want %d\n%s", got, pid, wl.all.String())
	}
}

// TestAttachReplacedBinary: patchprof -p of a process whose executable
// was replaced on disk since it started (a new build renamed over it, as
// a deploy does; /proc/PID/exe ends in " (deleted)") reads the file the
// process runs, through /proc/PID/exe, not the new one at its path: the
// profile names the old build, counts its 100 calls of work exactly, and
// the detach leaves the process untraced, with its mappings as before.
// It once planned the new build, found no mapping of it and counted 0.
func TestAttachReplacedBinary(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	const id1, id2 = "5555555555555555555555555555555555555555", "6666666666666666666666666666666666666666"
	v1 := buildC(t, "oncommand.c", "-g", "-O0", "-pthread", "-Wl,--build-id=0x"+id1)
	v2 := buildC(t, "oncommand.c", "-g", "-O0", "-pthread", "-Wl,--build-id=0x"+id2)
	path := filepath.Join(t.TempDir(), "served")
	deploy := deployer(t, path)
	deploy(v1)
	c := startCommandTarget(t, path)
	pid := c.cmd.Process.Pid
	deploy(v2)
	codeMaps.Store(pid, execMappings(t, pid))
	save := filepath.Join(t.TempDir(), "p.json")
	pp, esc := startAttached(t, "--funcs", "--func", "^work$", "--save", save, "-p", strconv.Itoa(pid))
	go func() {
		for esc.Scan() {
		}
	}()
	c.ask(t, 100)
	pp.Process.Signal(syscall.SIGINT)
	if err := pp.Wait(); err != nil {
		t.Fatalf("patchprof: %v", err)
	}
	p, err := readProfile(save)
	if err != nil {
		t.Fatal(err)
	}
	if p.BuildID != id1 || p.Executable != path {
		t.Errorf("profile of %s, build %s; want %s, build %s", p.Executable, p.BuildID, path, id1)
	}
	if n, ok := funcCount(p, "work"); !ok || n != 100 {
		t.Errorf("work counted %d (%v), want exactly 100", n, ok)
	}
	waitUntraced(t, pid)
	checkDetached(t, pid)
	c.ask(t, 1)
	c.end(t)
}

// deployer returns a function that puts a copy of a build at path the way
// a deploy does: written beside it, then renamed over it, so a process
// running the old file keeps it (its /proc/PID/exe then ends in
// " (deleted)").
func deployer(t *testing.T, path string) func(from string) {
	return func(from string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err == nil {
			err = os.WriteFile(path+".new", b, 0o755)
		}
		if err == nil {
			err = os.Rename(path+".new", path)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
