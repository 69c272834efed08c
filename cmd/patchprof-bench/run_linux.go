package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/patchprof/patchprof/profile"
)

// A bench is one run of the benchmark: its settings, the tools it found
// and the builds it made.
type bench struct {
	opts      *Options
	root, tmp string
	patchprof string
	// floor is the build of ./cmd/patchprof-bench/floor, when the floor configuration
	// runs.
	floor string
	// uftrace and valgrind are set when the tool is on PATH.
	uftrace, valgrind bool
	log               io.Writer
}

// A slot is one configuration of one workload over the repetitions.
type slot struct {
	Measure
	// done is set when the configuration timed out, failed or cannot run:
	// it is not run again.
	done bool
	// output is the first run's standard output, for a start workload
	// (Workload.Start), whose configurations print different things.
	output []byte
}

// A workloadRun is one workload's state over the repetitions: its builds,
// its slots, the reference its runs are checked against, and what went
// wrong.
type workloadRun struct {
	w     Workload
	t     *Target
	slots []*slot
	// output is the first run's standard output; every other run must
	// print the same.
	output  []byte
	checker countChecker
	// servers are a server's engines (server_linux.go), which run in
	// place of slots.
	servers []*serverSlot
	// watches are the watch workload's selectors (watch_linux.go),
	// which run in place of slots.
	watches []*watchSlot
	// pause is the attach-pause workload's measure (pause_linux.go),
	// which runs in place of slots.
	pause *pauseSlot
	// traps and reasons are what the first jump profile's notes say of
	// the sites that trapped (suites.go), when hasTraps.
	traps    uint64
	reasons  []TrapReason
	hasTraps bool
}

func run(o *Options) int {
	b := &bench{opts: o, log: os.Stderr}
	_, err := exec.LookPath("uftrace")
	b.uftrace = err == nil
	_, err = exec.LookPath("valgrind")
	b.valgrind = err == nil
	if err := b.setUp(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer b.cleanUp()
	var wrs []*workloadRun
	for _, w := range workloads {
		if !slices.Contains(o.Workloads, w.Name) {
			continue
		}
		wr, err := b.prepare(w)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: building %s: %v\n", w.Name, err)
			return 1
		}
		wrs = append(wrs, wr)
	}
	start := time.Now()
	// Round-robin: each repetition runs every configuration of every
	// workload once, so drift of the machine falls on all of them.
	for rep := 1; rep <= o.Reps; rep++ {
		for _, wr := range wrs {
			if wr.w.Handler != "" {
				b.runServer(wr, rep)
				continue
			}
			if wr.w.Idle > 0 {
				b.runWatch(wr, rep)
				continue
			}
			if wr.w.Pause {
				b.runPause(wr, rep)
				continue
			}
			for _, s := range wr.slots {
				if !s.done {
					b.runSlot(wr, s, rep)
				}
			}
		}
	}
	fmt.Fprintf(b.log, "bench: measured in %v\n", time.Since(start).Round(time.Second))
	return b.report(os.Stdout, wrs)
}

// setUp makes the temporary directory and builds patchprof, and the floor
// when it runs, into it.
func (b *bench) setUp() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	b.root = root
	if b.tmp, err = os.MkdirTemp("", "patchprof-bench-"); err != nil {
		return err
	}
	fmt.Fprintf(b.log, "bench: building patchprof and the targets in %s\n", b.tmp)
	if b.patchprof, err = buildPatchprof(root, b.tmp); err != nil {
		return err
	}
	if slices.Contains(b.opts.Configs, cfgFloor) {
		b.floor, err = buildFloor(root, b.tmp)
	}
	return err
}

// cleanUp removes the temporary directory unless -keep asked to keep it.
func (b *bench) cleanUp() {
	if b.opts.Keep {
		fmt.Fprintf(b.log, "bench: builds, reports and profiles kept in %s\n", b.tmp)
		return
	}
	if err := os.RemoveAll(b.tmp); err != nil {
		fmt.Fprintln(b.log, "bench:", err)
	}
}

// prepare builds a workload and lays out its slots, with a note on those
// that cannot run here.
func (b *bench) prepare(w Workload) (*workloadRun, error) {
	useUftrace := slices.Contains(b.opts.Configs, cfgUftrace) && b.uftrace
	t, err := buildTarget(b.root, filepath.Join(b.tmp, w.Name), w, useUftrace)
	if err != nil {
		return nil, err
	}
	wr := &workloadRun{w: w, t: t}
	if w.Suite != nil {
		wr.checker.varies = w.Suite.Varies
	}
	if w.Handler != "" {
		b.prepareServer(wr)
		return wr, nil
	}
	if w.Idle > 0 {
		b.prepareWatch(wr)
		return wr, nil
	}
	if w.Pause {
		return wr, nil
	}
	for _, cfg := range b.opts.Configs {
		if w.Start && cfg != cfgNative && cfg != cfgJump {
			continue // counts nothing: only patchprof's start applies
		}
		s := &slot{Measure: Measure{Config: cfg, Label: b.label(w, t, cfg)}}
		switch {
		case b.opts.Skip[w.Name+":"+cfg]:
			s.Note = "skipped (-skip)"
		case w.Suite != nil && cfg == cfgFloor:
			s.Note = "n/a: the floor tracer follows no child process"
		case cfg == cfgUftrace && !b.uftrace:
			s.Note = "skipped: uftrace not installed"
		case cfg == cfgUftrace && t.Pg == "":
			s.Note = t.PgNote
		case cfg == cfgGcov && t.Cover == "":
			s.Note = t.CoverNote
		case cfg == cfgCallgrind && !b.valgrind:
			s.Note = "skipped: valgrind not installed"
		}
		s.done = s.Note != ""
		wr.slots = append(wr.slots, s)
	}
	return wr, nil
}

// label is a configuration's name as the table shows it.
func (b *bench) label(w Workload, t *Target, cfg string) string {
	switch {
	case w.Start && cfg == cfgNative:
		return "native: a Go hello world"
	case w.Start:
		return "patchprof --version"
	}
	switch cfg {
	case cfgGcov:
		return t.CoverLabel
	case cfgCallgrind:
		return "callgrind"
	case cfgUftrace:
		return "uftrace record (-pg build)"
	case cfgNative:
		return "native"
	case cfgFloor:
		return "floor: a Go ptrace tracer, no profiling"
	case cfgJumpTime:
		return "patchprof --engine jump --time"
	case cfgJumpCalls:
		return "patchprof --engine jump --calls"
	case cfgJumpCache:
		return "patchprof --engine jump, warm analysis cache"
	}
	return "patchprof --engine " + cfg
}

// runSlot runs one configuration of a workload once, and records its time
// or why it failed.
func (b *bench) runSlot(wr *workloadRun, s *slot, rep int) {
	dir := filepath.Join(b.tmp, wr.w.Name, "run-"+s.Config)
	if err := os.RemoveAll(dir); err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	name, args, env := b.commandLine(wr, s.Config, dir)
	if s.Config == cfgJumpCache && rep == 0 {
		// The first run fills the cache, untimed: the timed ones find it
		// warm.
		timed(b.opts.Timeout, dir, env, name, args)
	}
	res := timed(b.opts.Timeout, dir, env, name, args)
	fmt.Fprintf(b.log, "bench: %d/%d %-10s %-9s %s\n", rep, b.opts.Reps, wr.w.Name, s.Config, res.summary())
	switch {
	case res.timedOut:
		s.TimedOut, s.done = true, true
		return
	case res.err != nil:
		s.Note = "failed: " + shorten(res.err.Error()+": "+firstLine(res.stderr), 90)
		s.done = true
		if isOurs(s.Config) {
			// Another tool's failure is its own (callgrind aborts on
			// some Go programs); the table says so.
			wr.checker.problem(fmt.Sprintf("%s failed: %v\n%s", s.Config, res.err, tail(res.stderr)))
		}
		return
	}
	// A start workload's configurations run different programs: each
	// must print what its own first run printed.
	first := &wr.output
	if wr.w.Start {
		first = &s.output
	}
	if *first == nil {
		*first = res.stdout
	} else if !bytes.Equal(res.stdout, *first) {
		wr.checker.problem(fmt.Sprintf("%s printed %q, the first run %q", s.Config, shorten(string(res.stdout), 200), shorten(string(*first), 200)))
	}
	s.Times = append(s.Times, res.wall)
	if res.maxRSS > 0 {
		s.RSS = append(s.RSS, res.maxRSS)
	}
	if isEngine(s.Config) && !wr.w.Start {
		p, err := profile.Load(filepath.Join(dir, "profile.json"))
		if err != nil {
			wr.checker.problem(fmt.Sprintf("%s: loading its saved profile: %v", s.Config, err))
			return
		}
		wr.checker.add(s.Config, p)
		if n, ok := trapsOf(p.Notes); ok && !wr.hasTraps && s.Config == cfgJump {
			wr.traps, wr.reasons, wr.hasTraps = n, trapReasons(p.Notes), true
		}
	}
}

// commandLine is how a configuration runs a workload in dir.
func (b *bench) commandLine(wr *workloadRun, cfg, dir string) (name string, args, env []string) {
	t, w := wr.t, wr.w
	if w.Suite != nil {
		return b.suiteCommand(wr, cfg, dir)
	}
	if w.Start && cfg != cfgNative {
		return b.patchprof, []string{"--version"}, nil
	}
	switch cfg {
	case cfgNative:
		return t.Plain, t.Args, nil
	case cfgFloor:
		return b.floor, append([]string{t.Plain}, t.Args...), nil
	case cfgGcov:
		// GCOV_PREFIX (or GOCOVERDIR) puts the counters in dir, which
		// runSlot empties before each run: no run merges into another's.
		return t.Cover, t.Args, []string{t.CoverEnv + "=" + dir}
	case cfgCallgrind:
		return "valgrind", append([]string{"-q", "--tool=callgrind", "--callgrind-out-file=/dev/null", t.Plain}, t.Args...), nil
	case cfgUftrace:
		return "uftrace", append([]string{"record", "-d", filepath.Join(dir, "uftrace.data"), t.Pg}, t.Args...), nil
	}
	args = append(engineFlags(cfg), w.Mode...)
	args = append(args, b.opts.PatchprofFlags...)
	args = append(args, "-o", filepath.Join(dir, "report.txt"), "--save", filepath.Join(dir, "profile.json"), "--", t.Plain)
	return b.patchprof, append(args, t.Args...), []string{b.cacheEnv(wr, cfg, dir)}
}

// engineFlags are the flags that choose a patchprof configuration's
// engine.
func engineFlags(cfg string) []string {
	switch cfg {
	case cfgJumpTime:
		return []string{"--engine", cfgJump, "--time"}
	case cfgJumpCalls:
		return []string{"--engine", cfgJump, "--calls"}
	case cfgJumpCache:
		return []string{"--engine", cfgJump}
	}
	return []string{"--engine", cfg}
}

// cacheEnv places a patchprof run's analysis cache, never the user's:
// in dir, emptied before each run, so that every run is a first run;
// under jump+cache in one directory per workload that the runs share.
func (b *bench) cacheEnv(wr *workloadRun, cfg, dir string) string {
	if cfg == cfgJumpCache {
		return "XDG_CACHE_HOME=" + filepath.Join(b.tmp, wr.w.Name, "cache-warm")
	}
	return "XDG_CACHE_HOME=" + filepath.Join(dir, "cache")
}

// A result is what one timed run gave.
type result struct {
	wall           time.Duration
	maxRSS         int64 // KiB: wait4's ru_maxrss, 0 if unknown
	stdout, stderr []byte
	timedOut       bool
	err            error
}

// summary is a result in a few words, for the progress lines.
func (r result) summary() string {
	switch {
	case r.timedOut:
		return "timed out"
	case r.err != nil:
		return "failed: " + r.err.Error()
	}
	return formatSeconds(r.wall)
}

// timed runs a command in its own process group and measures its wall
// time; past the timeout the whole group is killed (a target under
// patchprof dies with it: PTRACE_O_EXITKILL).
func timed(timeout time.Duration, dir string, env []string, name string, args []string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(start), stdout: stdout.Bytes(), stderr: stderr.Bytes(), err: err}
	if ps := cmd.ProcessState; ps != nil {
		// Go starts a command from a vfork of the bench, whose memory the
		// kernel counts in the command's peak (exec keeps the larger):
		// a peak not above the bench's own says nothing of the command.
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > selfPeakKiB() {
			r.maxRSS = ru.Maxrss
		}
	}
	r.timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	return r
}

// selfPeakKiB returns the bench's own peak resident memory (VmHWM), in
// KiB; 0 when it cannot be read.
func selfPeakKiB() int64 { return statusKiB("/proc/self/status", "VmHWM:") }

// firstLine is the first line of a command's error output that says most:
// an assertion or error, else the first non-empty one.
func firstLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, l := range lines {
		if strings.Contains(l, "Assertion") || strings.Contains(l, "rror") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}

// tail is the last lines of a command's output.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// shorten cuts s to n bytes, marking the cut.
func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "|", "/") // a table cell
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
