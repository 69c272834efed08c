package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/patchprof/patchprof/serve"
	"github.com/patchprof/patchprof/watch"
)

// watchFlags are the flags of `patchprof watch`.
type watchFlags struct {
	exe, cgroup, pidFile, save, perProcess string
	listen                                 string
	top                                    int
	poll, interval                         time.Duration
	maxProcs                               int
	noEvents                               bool
	child                                  []string // the counting flags, passed to each -p
}

// watchFlagSet is the flag set of `patchprof watch`, parsing into wf; the
// counting flags it shares with a launch are kept in pass.
func watchFlagSet(wf *watchFlags, pass *passFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("patchprof watch", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&wf.exe, "exe", "", "watch every process whose executable is the file at `PATH` (by device and inode: a binary replaced at PATH is another)")
	fs.StringVar(&wf.cgroup, "cgroup", "", "watch every process in the cgroup v2 subtree at `PATH` (/system.slice/NAME.service for a systemd unit, or the cgroup's directory), whatever it runs")
	fs.StringVar(&wf.pidFile, "pid-file", "", "watch the process whose PID the file at `PATH` holds, as it is rewritten")
	fs.StringVar(&wf.save, "save", "", "write the aggregate profile (every process of the build, past and present) as JSON to `FILE`, at the end, every --interval and on SIGUSR1")
	fs.StringVar(&wf.perProcess, "per-process", "", "keep each process's own profile in `DIR`, as PID-START.json")
	fs.DurationVar(&wf.poll, "poll", watch.DefaultPoll, "look for new processes every `D`: a new process is attached within about D of its start, and counted from then")
	fs.BoolVar(&wf.noEvents, "no-events", false, "poll every --poll even where the kernel's process events (CAP_NET_ADMIN) could wake the watch at each fork and exec instead")
	fs.DurationVar(&wf.interval, "interval", 0, "also write the aggregate of the moment every `D` while watching")
	fs.IntVar(&wf.maxProcs, "max-procs", watch.DefaultMaxProcs, "watch at most `N` processes at once; more are said and found again once one ends")
	fs.StringVar(&wf.listen, "listen", "", "serve the aggregate over HTTP on `ADDR` (:PORT is loopback; HOST:PORT; unix:PATH): /metrics for Prometheus, /debug/pprof/counts[?pid=N], /processes")
	fs.IntVar(&wf.top, "metrics-top", serve.DefaultTopFunctions, "with --listen: how many of each build's most called functions /metrics lists (`N`)")
	for _, b := range []string{"lines", "funcs", "blocks", "calls", "time"} {
		fs.Var(pass.bool(b), b, map[string]string{
			"lines": "count source lines (needs DWARF line info); the default", "funcs": "count calls of every function in the symbol table",
			"blocks": "count basic blocks and the edges between them (implies --funcs and --calls)", "calls": "count the call graph (implies --funcs)",
			"time": "also sample the CPU time of every thread of each process",
		}[b])
	}
	fs.Var(pass.value("func"), "func", "plant only in functions whose name matches `REGEXP`")
	fs.Var(pass.value("file"), "file", "plant only in source files whose path or base name matches `GLOB`")
	fs.Var(pass.value("lib"), "lib", "profile exactly the shared libraries whose path or base name matches `GLOB` (repeatable)")
	fs.Var(pass.value("engine"), "engine", "how a hit is served, `NAME` is jump (the default), xol or classic")
	return fs
}

// passFlags collects flags given to watch that each child patchprof
// takes as they are, in order.
type passFlags struct{ args []string }

func (p *passFlags) bool(name string) flag.Value  { return passValue{p, name, true} }
func (p *passFlags) value(name string) flag.Value { return passValue{p, name, false} }

// A passValue is one passed-through flag.
type passValue struct {
	p      *passFlags
	name   string
	isBool bool
}

func (v passValue) String() string   { return "" }
func (v passValue) IsBoolFlag() bool { return v.isBool }
func (v passValue) Set(s string) error {
	v.p.args = append(v.p.args, "--"+v.name+"="+s)
	return nil
}

// parseWatchFlags parses and checks watch's flags.
func parseWatchFlags(args []string) (*watchFlags, watch.Selector, error) {
	var wf watchFlags
	var pass passFlags
	fs := watchFlagSet(&wf, &pass)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(os.Stdout, "usage: patchprof watch (--exe PATH | --cgroup PATH | --pid-file FILE) --save FILE [flags]\n")
			printFlags(fs, os.Stdout)
			return nil, nil, err
		}
		return nil, nil, failed("watch: %v (see patchprof watch -h)", err)
	}
	wf.child = pass.args
	var sel watch.Selector
	switch {
	case fs.NArg() > 0:
		return nil, nil, failed("watch takes no program: patchprof watch --exe PATH --save FILE (start the program yourself)")
	case countSet(wf.exe, wf.cgroup, wf.pidFile) != 1:
		return nil, nil, failed("watch: give what to watch, one of --exe PATH, --cgroup PATH or --pid-file FILE")
	case wf.save == "":
		return nil, nil, failed("watch: give --save FILE: the aggregate profile is written there (read it with patchprof report FILE)")
	case wf.poll <= 0:
		return nil, nil, failed("watch: --poll %v: give a positive duration", wf.poll)
	case wf.interval < 0:
		return nil, nil, failed("watch: --interval %v: give a positive duration", wf.interval)
	case wf.top < 1:
		return nil, nil, failed("watch: --metrics-top %d: give at least 1", wf.top)
	case wf.maxProcs < 1:
		return nil, nil, failed("watch: --max-procs %d: give at least 1", wf.maxProcs)
	}
	switch {
	case wf.exe != "":
		path, err := resolve(wf.exe)
		if err != nil {
			return nil, nil, err
		}
		sel = watch.Exe{Path: path}
	case wf.cgroup != "":
		dir, err := watch.CgroupDir(wf.cgroup)
		if err != nil {
			return nil, nil, failed("watch: %v", err)
		}
		sel = &watch.Cgroup{Dir: dir, Name: wf.cgroup}
	default:
		abs, err := filepath.Abs(wf.pidFile)
		if err != nil {
			return nil, nil, failed("--pid-file %s: %v", wf.pidFile, err)
		}
		sel = watch.PIDFile{Path: abs}
	}
	if err := checkOutput("--save", wf.save, outReplace); err != nil {
		return nil, nil, err
	}
	return &wf, sel, nil
}

// countSet returns how many of vs are given (not "").
func countSet(vs ...string) int {
	n := 0
	for _, v := range vs {
		if v != "" {
			n++
		}
	}
	return n
}

// watchMain runs `patchprof watch`: it watches the selected processes
// until SIGINT, SIGTERM or SIGHUP, then detaches from each, leaving it as
// found, and writes the aggregate.
func watchMain(args []string, stderr io.Writer) int {
	wf, sel, err := parseWatchFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return fail(stderr, err)
	}
	self, err := os.Executable()
	if err != nil {
		return fail(stderr, failed("watch: cannot find patchprof's own executable to attach with: %v", err))
	}
	oneProc()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs := watchSignals(newRunSignals(stderr, " before watching"))
	// A termination signal ends the watch as it ends an attach.
	rs.start(true, cancel)
	defer rs.finish()
	var saveErr error
	w, err := watch.New(watch.Options{
		Select: sel, Patchprof: self, Args: wf.child, Dir: wf.perProcess,
		Poll: wf.poll, Interval: wf.interval, MaxProcs: wf.maxProcs, NoEvents: wf.noEvents, Log: stderr,
		Save: func(builds []watch.Build, final bool) {
			saveErr = saveBuilds(builds, wf.save, stderr)
			if !final && saveErr != nil {
				fmt.Fprintf(stderr, "patchprof: %v\n", saveErr)
			}
		},
	})
	if err != nil {
		return fail(stderr, err)
	}
	stopServe, err := serveWatch(wf, w, stderr)
	if err != nil {
		return fail(stderr, err)
	}
	err = w.Run(ctx, rs.snap)
	stopServe()
	if err != nil {
		return fail(stderr, err)
	}
	if saveErr != nil {
		return fail(stderr, saveErr)
	}
	return 0
}

// oneProc runs the watch's goroutines on one thread at a time (one P),
// unless GOMAXPROCS is set: the watch's work is short reads, one wake-up
// at a time, and with a second P each wake-up also woke a second thread
// to look for work and sleep again, about doubling the watch's context
// switches and CPU while its processes are idle (docs/performance.md).
// The children, each its own process, keep the default.
func oneProc() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// serveWatch starts the endpoints of --listen, if given; the returned
// function stops them.
func serveWatch(wf *watchFlags, w *watch.Watcher, stderr io.Writer) (stop func(), err error) {
	if wf.listen == "" {
		return func() {}, nil
	}
	l, public, err := serve.Listen(wf.listen)
	if err != nil {
		return nil, failed("%v", err)
	}
	s := serve.Serve(l, watch.NewHandler(w, wf.top, time.Now()))
	if public {
		fmt.Fprintf(stderr, "patchprof: warning: --listen %s serves the watched processes' profiles to anyone who can reach %s: there is no authentication (listen on loopback)\n", wf.listen, l.Addr())
	}
	fmt.Fprintf(stderr, "patchprof: serving the watch at %s\n", s.URL())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			fmt.Fprintf(stderr, "patchprof: --listen %s: %v\n", wf.listen, err)
		}
	}, nil
}

// saveBuilds writes the aggregate: the build found last (the binary now
// deployed) to path, each earlier one beside it as path.BUILDID.
func saveBuilds(builds []watch.Build, path string, stderr io.Writer) error {
	var errs []error
	for i, b := range builds {
		out := path
		if i < len(builds)-1 {
			out = path + "." + fileKey(b.Key)
		}
		if err := saveProfile(b.Profile, out, stderr); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// fileKey is a build's key as a file name's part: the build ID's first 16
// hex digits, or the executable's base name.
func fileKey(key string) string {
	if strings.Trim(key, "0123456789abcdef") == "" && len(key) > 16 {
		return key[:16]
	}
	return filepath.Base(key)
}
