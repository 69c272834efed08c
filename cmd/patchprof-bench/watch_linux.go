package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/patchprof/patchprof/profile"
)

// watchSettle is how long the watch is left after its last attach before
// the window: the children's ends of their attaches are not idle cost.
const watchSettle = 2 * time.Second

// A watchSlot is one selector of the watch workload over the
// repetitions: the watch's CPU share and memory, and its children's, each
// round.
type watchSlot struct {
	Selector string // "--exe" or "--cgroup"
	// NoEvents polls (--no-events) where process events could serve.
	NoEvents bool
	Note     string // why it does not run, if it does not
	// WatchCPU and KidsCPU are the share of one core the watch and all its
	// children used over each round's window, in percent; WatchRSS and
	// KidRSS their resident memory at its end (a child's: the mean), KiB.
	WatchCPU, KidsCPU []float64
	WatchRSS, KidRSS  []float64
	// Exact counts the rounds whose aggregate counted each process's calls
	// after the window exactly.
	Exact int
}

// prepareWatch makes the watch workload's slots: --exe polling (the
// baseline) and woken by process events, and --cgroup where a cgroup v2
// directory can be made.
func (b *bench) prepareWatch(wr *workloadRun) {
	wr.watches = []*watchSlot{{Selector: "--exe", NoEvents: true}, {Selector: "--exe"}, {Selector: "--cgroup"}}
	if dir, err := b.watchCgroup(); err != nil {
		wr.watches[2].Note = fmt.Sprintf("not measured: cannot make a cgroup v2 directory (%v)", err)
	} else {
		os.Remove(dir)
	}
}

// watchCgroup makes a cgroup v2 directory under the host's mount.
func (b *bench) watchCgroup() (string, error) {
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(info), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		if f := strings.Fields(pre); ok && len(f) >= 5 && strings.HasPrefix(post, "cgroup2 ") {
			return os.MkdirTemp(f[4], "patchprof-bench-")
		}
	}
	return "", fmt.Errorf("no cgroup v2 file system is mounted")
}

// idleTarget is one idle copy of oncommand.c: blocked on its stdin.
type idleTarget struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	sc  *bufio.Scanner
}

// runWatch runs one round of each of the watch workload's selectors.
func (b *bench) runWatch(wr *workloadRun, rep int) {
	for _, s := range wr.watches {
		if s.Note != "" {
			continue
		}
		if err := b.watchRound(wr, s, rep); err != nil {
			wr.checker.problems = append(wr.checker.problems, fmt.Sprintf("watch %s, round %d: %v", s.label(), rep, err))
		}
	}
}

// watchRound starts the workload's idle processes, watches them until all
// are attached, measures the window, then makes each call work() 100
// times and checks the aggregate counted exactly those calls.
func (b *bench) watchRound(wr *workloadRun, s *watchSlot, rep int) error {
	n := wr.w.Idle
	cgroupFD := -1
	sel := []string{"--exe", wr.t.Plain}
	if s.Selector == "--cgroup" {
		dir, err := b.watchCgroup()
		if err != nil {
			return err
		}
		defer os.Remove(dir)
		fd, err := syscall.Open(dir, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		cgroupFD, sel = fd, []string{"--cgroup", dir}
	}
	var targets []*idleTarget
	defer func() {
		for _, t := range targets {
			t.in.Close()
			t.cmd.Wait()
		}
	}()
	for range n {
		t, err := startIdle(wr.t.Plain, cgroupFD)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	save := filepath.Join(b.tmp, fmt.Sprintf("watch-%s-%v-%d.json", strings.TrimPrefix(s.Selector, "--"), s.NoEvents, rep))
	args := append([]string{"watch"}, sel...)
	if s.NoEvents {
		args = append(args, "--no-events")
	}
	args = append(args, "--funcs", "--func", "^work$", "--save", save, "--max-procs", strconv.Itoa(n))
	w := exec.Command(b.patchprof, args...)
	stderr, err := w.StderrPipe()
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Process.Kill()
	var log strings.Builder
	attached := make(chan struct{}, n)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "patchprof: watch: attached to PID ") {
				attached <- struct{}{}
			}
		}
		close(attached)
	}()
	deadline := time.After(b.opts.Timeout)
	for range n {
		select {
		case _, ok := <-attached:
			if !ok {
				w.Wait()
				return fmt.Errorf("the watch ended before attaching to all %d processes:\n%s", n, log.String())
			}
		case <-deadline:
			return fmt.Errorf("not all %d processes attached within -timeout %v", n, b.opts.Timeout)
		}
	}
	time.Sleep(watchSettle)
	pid := w.Process.Pid
	w0, k0 := cpuTicks(pid), childTicks(pid)
	start := time.Now()
	time.Sleep(b.opts.WatchWindow)
	w1, k1 := cpuTicks(pid), childTicks(pid)
	secs := time.Since(start).Seconds()
	s.WatchCPU = append(s.WatchCPU, 100*float64(w1-w0)/clockTicks/secs)
	s.KidsCPU = append(s.KidsCPU, 100*float64(k1-k0)/clockTicks/secs)
	s.WatchRSS = append(s.WatchRSS, float64(rssKiB(pid)))
	s.KidRSS = append(s.KidRSS, meanChildRSS(pid))

	for _, t := range targets {
		fmt.Fprintf(t.in, "100\n")
		if !t.sc.Scan() || !strings.HasPrefix(t.sc.Text(), "done 100 ") {
			return fmt.Errorf("PID %d did not answer: %q", t.cmd.Process.Pid, t.sc.Text())
		}
	}
	w.Process.Signal(syscall.SIGTERM)
	for range attached {
	}
	if err := w.Wait(); err != nil {
		return fmt.Errorf("patchprof watch: %v\n%s", err, log.String())
	}
	p, err := profile.Load(save)
	if err != nil {
		return err
	}
	for _, f := range p.Functions {
		if f.Name == "work" {
			if f.Count != uint64(100*n) {
				return fmt.Errorf("work counted %d over the %d processes, want exactly %d", f.Count, n, 100*n)
			}
			s.Exact++
			return nil
		}
	}
	return fmt.Errorf("no function work in the aggregate %s", save)
}

// startIdle starts exe (oncommand.c), in the cgroup of cgroupFD unless it
// is -1, and waits for its "ready".
func startIdle(exe string, cgroupFD int) (*idleTarget, error) {
	cmd := exec.Command(exe)
	if cgroupFD >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: cgroupFD}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("%s did not start: %q", exe, sc.Text())
	}
	return &idleTarget{cmd: cmd, in: in, sc: sc}, nil
}

// clockTicks is the unit of /proc/PID/stat's times (sysconf(_SC_CLK_TCK),
// 100 on Linux x86-64).
const clockTicks = 100

// cpuTicks returns process pid's user and system time, in clock ticks
// (/proc/PID/stat fields 14 and 15).
func cpuTicks(pid int) uint64 {
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	s, _ := strconv.ParseUint(f[12], 10, 64)
	return u + s
}

// statFields returns the fields of /proc/PID/stat after the command name
// (f[0] is field 3).
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	return strings.Fields(string(b[i+1:]))
}

// children returns the PIDs whose parent is pid.
func children(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// childTicks sums cpuTicks over pid's children.
func childTicks(pid int) uint64 {
	var sum uint64
	for _, c := range children(pid) {
		sum += cpuTicks(c)
	}
	return sum
}

// rssKiB returns process pid's resident memory (VmRSS), KiB.
func rssKiB(pid int) int64 {
	return statusKiB("/proc/"+strconv.Itoa(pid)+"/status", "VmRSS:")
}

// statusKiB returns the size a /proc/PID/status file gives for field
// ("VmRSS:", "VmHWM:"), in KiB; 0 when it cannot be read.
func statusKiB(path, field string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// meanChildRSS is the mean rssKiB of pid's children.
func meanChildRSS(pid int) float64 {
	cs := children(pid)
	if len(cs) == 0 {
		return 0
	}
	var sum int64
	for _, c := range cs {
		sum += rssKiB(c)
	}
	return float64(sum) / float64(len(cs))
}

// label names the slot in the table: its selector, and how it finds
// processes.
func (s *watchSlot) label() string {
	if s.NoEvents {
		return s.Selector + " --no-events (polling /proc)"
	}
	return s.Selector + " (process events where permitted)"
}

// writeWatchTable writes the watch workload's table: per selector, the
// medians over the rounds.
func (b *bench) writeWatchTable(w io.Writer, wr *workloadRun) {
	fmt.Fprintf(w, "%s: CPU over %v, %v after the last attach; median of %d rounds\n\n",
		wr.w.Title, b.opts.WatchWindow, watchSettle, b.opts.Reps)
	fmt.Fprintf(w, "| selector | the watch's CPU, %% of a core | its %d children's, in all | the watch's RSS | a child's RSS | rounds exact |\n", wr.w.Idle)
	fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range wr.watches {
		if s.Note != "" {
			fmt.Fprintf(w, "| %s | %s | | | | |\n", s.label(), s.Note)
			continue
		}
		fmt.Fprintf(w, "| %s | %.2f%% | %.2f%% | %.1f MiB | %.1f MiB | %d of %d |\n", s.label(),
			medianRate(s.WatchCPU), medianRate(s.KidsCPU), medianRate(s.WatchRSS)/1024, medianRate(s.KidRSS)/1024, s.Exact, len(s.WatchCPU))
	}
	fmt.Fprintln(w)
}
