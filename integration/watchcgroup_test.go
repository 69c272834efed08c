//go:build linux

package integration

import (
	"bufio"
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
)

// testCgroup makes a cgroup v2 directory for the test under the host's
// cgroup v2 mount, removed at the end, or skips, saying why, where none
// is mounted or it is not writable (an unprivileged user, a read-only
// /sys/fs/cgroup in a container).
func testCgroup(t *testing.T) string {
	t.Helper()
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mount := ""
	for _, l := range strings.Split(string(info), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		if f := strings.Fields(pre); ok && len(f) >= 5 && strings.HasPrefix(post, "cgroup2 ") {
			mount = f[4]
			break
		}
	}
	if mount == "" {
		t.Skip("no cgroup v2 file system is mounted: the test makes a cgroup v2 directory")
	}
	dir, err := os.MkdirTemp(mount, "patchprof-test-")
	if err != nil {
		t.Skipf("cgroup v2 is not writable here (%v): the test makes a cgroup v2 directory (run as root, or with a delegated cgroup)", err)
	}
	t.Cleanup(func() {
		// The child first; a cgroup is removed once its processes are
		// gone, and the clean-ups that kill the targets run before this.
		for _, d := range []string{filepath.Join(dir, "batch"), dir} {
			if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("remove the test's cgroup: %v", err)
			}
		}
	})
	return dir
}

// startTargetIn starts exe (oncommand.c) in the cgroup at dir, from its
// first instruction (clone3's CLONE_INTO_CGROUP, as a service manager
// starts a unit's process), and records its state for checkDetached as
// startCommandTarget does.
func startTargetIn(t *testing.T, exe, dir string) *commandTarget {
	t.Helper()
	fd, err := syscall.Open(dir, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	cmd := exec.Command(exe)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a process into a cgroup (clone3 CLONE_INTO_CGROUP, Linux 5.7): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("target did not start: %q", sc.Text())
	}
	c := &commandTarget{cmd: cmd, in: in, sc: sc}
	c.ask(t, 0)
	pid := cmd.Process.Pid
	codeMaps.Store(pid, execMappings(t, pid))
	sigMaps.Store(pid, dispositions(t, pid))
	return c
}

var watchEndedRE = regexp.MustCompile(`^patchprof: watch: PID (\d+) ended; its counts kept`)

// TestWatchCgroup watches a cgroup v2 subtree the test makes: short-lived
// processes started into it and into a cgroup below it are each attached,
// do their work and exit, one after another and two at once; a copy of the
// same program outside the cgroup is not watched. The aggregate counts
// exactly the calls the processes made while attached, by their own count.
// It runs woken by the kernel's process events where patchprof may join
// them (CAP_NET_ADMIN), and polling (--no-events).
func TestWatchCgroup(t *testing.T) {
	for _, mode := range []string{"events", "--no-events"} {
		t.Run(mode, func(t *testing.T) { testWatchCgroup(t, mode == "--no-events") })
	}
}

func testWatchCgroup(t *testing.T, noEvents bool) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	cg := testCgroup(t)
	batch := filepath.Join(cg, "batch")
	if err := os.Mkdir(batch, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := buildC(t, "oncommand.c", "-g", "-O0", "-pthread")
	outside := startCommandTarget(t, exe)
	save := filepath.Join(t.TempDir(), "agg.json")
	args := []string{"--cgroup", cg, "--funcs", "--func", "^work$", "--save", save}
	if noEvents {
		args = append(args, "--no-events")
	}
	pp, wl, _ := startWatch(t, args...)
	wl.waitFor(t, regexp.MustCompile(`^patchprof: watch: watching --cgroup `))

	counted := 0
	// attach starts n processes, in the cgroups of dirs in turn, and waits
	// until each is attached.
	attach := func(dirs ...string) []*commandTarget {
		byPID := map[int]*commandTarget{}
		var cs []*commandTarget
		for _, d := range dirs {
			c := startTargetIn(t, exe, d)
			byPID[c.cmd.Process.Pid] = c
			cs = append(cs, c)
		}
		for range dirs {
			pid, _ := strconv.Atoi(wl.waitFor(t, watchAttachedRE)[1])
			if byPID[pid] == nil {
				t.Fatalf("attached to PID %d, not one started in the cgroup (%v)\n%s", pid, byPID, wl.all.String())
			}
			delete(byPID, pid)
		}
		return cs
	}
	// finish makes each process work n calls more and exit, and waits until
	// the watch has let go of it.
	finish := func(cs []*commandTarget, n int) {
		for _, c := range cs {
			c.ask(t, n)
			counted += n
			c.end(t)
		}
		left := map[string]bool{}
		for _, c := range cs {
			left[strconv.Itoa(c.cmd.Process.Pid)] = true
		}
		for len(left) > 0 { // in either order
			pid := wl.waitFor(t, watchEndedRE)[1]
			if !left[pid] {
				t.Fatalf("PID %s ended, not one of %v\n%s", pid, left, wl.all.String())
			}
			delete(left, pid)
		}
	}
	for i, d := range []string{cg, batch, cg} {
		finish(attach(d), 100*(i+1))
		outside.ask(t, 10) // never counted
	}
	finish(attach(cg, batch), 1000)

	if n := stopWatch(t, pp, wl, save); n != int64(counted) {
		t.Errorf("work counted %d over the cgroup's processes, want exactly %d\n%s", n, counted, wl.all.String())
	}
	if strings.Contains(wl.all.String(), fmt.Sprintf("PID %d", outside.cmd.Process.Pid)) {
		t.Errorf("the copy outside the cgroup, PID %d, was watched:\n%s", outside.cmd.Process.Pid, wl.all.String())
	}
	outside.ask(t, 1)
	outside.end(t)
}
