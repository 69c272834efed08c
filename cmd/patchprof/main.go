package main

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/output"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/profiler"
)

func main() {
	monitor.ExitIfWaker()
	os.Exit(Main(os.Args[1:], os.Stderr))
}

// Main runs patchprof with args (without the command name) and returns the exit
// status.
func Main(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "report" {
		return reportMain(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "merge" {
		return mergeMain(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "watch" {
		return watchMain(args[1:], stderr)
	}
	f, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return fail(stderr, err)
	}
	// A step that takes more than a second shows on a terminal's stderr;
	// anything patchprof itself writes there ends the step first.
	pr := newProgress(stderr)
	defer pr.done()
	stderr = pr
	// From here a termination signal says what it ended.
	before := fmt.Sprintf(" before attaching to PID %d, which runs on untouched", f.run.attach)
	if f.run.attach == 0 {
		before = " before " + f.args[0] + " started"
	}
	f.run.sigs = watchSignals(newRunSignals(stderr, before))
	t, err := f.target()
	if err != nil {
		return fail(stderr, err)
	}
	f.run.prog = t.Name
	if t.Attach == 0 {
		// Said before the target runs, which may fail for want of them.
		f.run.notes = setIDNotes(t.Path, t.Name)
		for _, n := range f.run.notes {
			fmt.Fprintf(stderr, "patchprof: %s\n", n)
		}
		if f.cfg.Pin {
			// Said on the report's first line, and saved with the profile.
			f.run.notes = append(f.run.notes, output.PinnedNote)
		}
	}
	pr.step("reading " + t.Name)
	prof, err := profiler.Open(f.cfg, t)
	if err != nil {
		return fail(stderr, err)
	}
	defer prof.Close()
	return run(prof, f.run, pr, stderr)
}

// mainFlags are the main command's parsed and checked flags.
type mainFlags struct {
	cfg  profiler.Config
	run  runFlags
	args []string // the program and its arguments (none with -p)
}

// target resolves the program to start, or the process to attach to.
func (f *mainFlags) target() (profiler.Target, error) {
	if pid := f.run.attach; pid > 0 {
		if err := monitor.CheckAttach(pid); err != nil {
			return profiler.Target{}, err
		}
		path, read, argv, err := processImage(pid)
		if err != nil {
			return profiler.Target{}, err
		}
		return profiler.Target{Path: path, Read: read, Args: argv, Attach: pid, Name: fmt.Sprintf("%s (PID %d)", path, pid)}, nil
	}
	path, err := resolve(f.args[0])
	if err != nil {
		return profiler.Target{}, err
	}
	return profiler.Target{Path: path, Args: f.args, Name: f.args[0]}, nil
}

// mainFlagValues are the main command's flags as parsed, before checks.
type mainFlagValues struct {
	lines, funcs, std bool
	funcRE, fileGlob  string
	save              string
	attach            int
	duration          time.Duration
	interval          time.Duration
	noFollow          bool
	libs              libFlag
	engine            string
	pin               bool
	version           bool
	noCache           bool
	rf                reportFlags
	bf                *blockFlags
	lf                *listenFlags
	tf                *timeFlags
}

// mainFlagSet is the main command's flag set, parsing into v.
func mainFlagSet(v *mainFlagValues) *flag.FlagSet {
	fs := flag.NewFlagSet("patchprof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&v.lines, "lines", false, "count source lines (needs DWARF line info); the default")
	fs.BoolVar(&v.funcs, "funcs", false, "count calls of every function in the symbol table")
	fs.StringVar(&v.funcRE, "func", "", "plant only in functions whose name matches `REGEXP`")
	fs.StringVar(&v.fileGlob, "file", "", "plant only in source files whose path or base name matches `GLOB`")
	fs.BoolVar(&v.std, "std", false, "also profile the Go runtime and standard library")
	fs.StringVar(&v.save, "save", "", "write the raw profile as JSON to `FILE` (- is stdout)")
	fs.IntVar(&v.attach, "p", 0, "attach to the running process `PID` instead of starting a program")
	fs.StringVar(&v.engine, "engine", monitor.EngineJump, "how a hit is served, `NAME` is jump (counts in the target: a jmp to a trampoline at each site it can patch, xol elsewhere), xol (a trap; the instruction runs out of line: one stop, no thread held) or classic (Bishop's restore, single-step, re-arm)")
	fs.BoolVar(&v.version, "version", false, "print patchprof's version and the VCS revision it was built from, and exit")
	fs.BoolVar(&v.pin, "pin", true, "run patchprof's tracer and a started target on one CPU, so every stop is a cheap same-CPU hand-over; the target then sees one CPU (nproc, Go's GOMAXPROCS). On by default with the trap engines (classic, xol), off with jump; --pin=false keeps the target's CPU mask; ignored with -p")
	fs.Var(&v.libs, "lib", "profile exactly the shared libraries whose path or base name matches `GLOB` (repeatable; system libraries included); default: every library with the requested information outside the system directories")
	fs.BoolVar(&v.noCache, "no-cache", false, "neither read nor fill the analysis cache ($XDG_CACHE_HOME/patchprof, else ~/.cache/patchprof): every executable's and library's line table and functions are read from the file, as on a first run")
	fs.BoolVar(&v.noFollow, "no-follow", false, "profile only the first process: forked children run untraced with none of patchprof's bytes")
	fs.DurationVar(&v.interval, "interval", 0, "while the target runs, print the report (with --save: replace the saved profile) every `D`; SIGUSR1 does it at once")
	fs.DurationVar(&v.duration, "duration", 0, "with -p: detach after `D` (e.g. 30s, 2m); default: until the target exits or patchprof gets SIGINT/SIGTERM/SIGHUP")
	v.rf.register(fs)
	v.bf = registerBlockFlags(fs)
	v.lf = registerListenFlags(fs)
	v.tf = registerTimeFlags(fs)
	return fs
}

// parseFlags parses and checks the main command's flags; with -h it
// prints the usage and with --version the version, and returns
// flag.ErrHelp.
func parseFlags(args []string) (*mainFlags, error) {
	var v mainFlagValues
	fs := mainFlagSet(&v)
	if err := fs.Parse(attachedPID(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(fs, os.Stdout)
			return nil, err
		}
		return nil, failed("%v (see patchprof -h)", err)
	}
	if v.version {
		fmt.Print(versionText(debug.ReadBuildInfo()))
		return nil, flag.ErrHelp
	}
	lines, funcs, std, funcRE, fileGlob, save := v.lines, v.funcs, v.std, v.funcRE, v.fileGlob, v.save
	attach, duration, interval, noFollow, libs := v.attach, v.duration, v.interval, v.noFollow, v.libs
	engine, pin, rf, bf, lf := v.engine, v.pin, v.rf, v.bf, v.lf
	pGiven, pinGiven := false, false
	fs.Visit(func(f *flag.Flag) {
		pGiven = pGiven || f.Name == "p"
		pinGiven = pinGiven || f.Name == "pin"
	})
	if !pinGiven && engine == monitor.EngineJump {
		// Pinning makes a trap cheap; the in-process engine has few traps,
		// and the target keeps its own CPU set.
		pin = false
	}
	switch {
	case pGiven && attach <= 0:
		return nil, failed("-p %d: -p needs a process ID greater than 0", attach)
	case attach > 0 && fs.NArg() > 0:
		return nil, failed("-p PID attaches to a running process: give either -p or a program to run, not both")
	case attach == 0 && fs.NArg() == 0:
		return nil, failed("no program to run: patchprof [flags] [--] PROGRAM [ARGS...], or -p PID (see patchprof -h)")
	case engine != monitor.EngineXOL && engine != monitor.EngineClassic && engine != monitor.EngineJump:
		return nil, failed("--engine %q: want xol, classic or jump", engine)
	case interval < 0:
		return nil, failed("--interval %v: give a positive duration", interval)
	case duration < 0:
		return nil, failed("--duration %v: give a positive duration", duration)
	case duration > 0 && attach == 0:
		return nil, failed("--duration only applies with -p PID (a started program is profiled to its end)")
	}
	if err := bf.apply(); err != nil {
		return nil, err
	}
	if err := lf.check(); err != nil {
		return nil, err
	}
	if err := v.tf.check(); err != nil {
		return nil, err
	}
	lf.engine = engine
	opt, err := rf.options()
	if err != nil {
		return nil, err
	}
	if std {
		rf.scope.SystemDirs = goRootFree(output.SystemDirs)
	}
	lf.scope = rf.scope

	funcFilter, fileFilter, err := selectionFilters(funcRE, fileGlob)
	if err != nil {
		return nil, err
	}

	if rf.format != "listing" && rf.out == "" {
		return nil, failed("--format %s: give -o PATH (the target's output goes to stdout)", rf.format)
	}
	if err := rf.checkOutput(); err != nil {
		return nil, err
	}
	if err := checkOutput("--save", save, outReplace); err != nil {
		return nil, err
	}
	return &mainFlags{
		cfg: profiler.Config{
			Lines: lines, Funcs: funcs, Blocks: bf.blocks, Calls: bf.calls, Std: std,
			FuncFilter: funcFilter, FileFilter: fileFilter, Libs: libs,
			Source: opt.Sources.Lines, NoFollow: noFollow, Engine: engine, Pin: pin,
			Time: v.tf.time, SampleRate: v.tf.rate, TimeFallback: v.tf.fallback,
			Cache: !v.noCache,
		},
		run:  runFlags{attach: attach, duration: duration, interval: interval, save: save, rf: rf, bf: bf, opt: opt, lf: lf},
		args: fs.Args(),
	}, nil
}

// selectionFilters returns the filters of --func REGEXP and --file GLOB
// (nil when not given): a function name matches the regular expression,
// a file's path or base name the pattern.
func selectionFilters(funcRE, fileGlob string) (funcFilter, fileFilter func(string) bool, err error) {
	if funcRE != "" {
		re, err := regexp.Compile(funcRE)
		if err != nil {
			return nil, nil, failed("--func %q is not a valid regular expression: %v", funcRE, err)
		}
		funcFilter = re.MatchString
	}
	if fileGlob != "" {
		if _, err := filepath.Match(fileGlob, ""); err != nil {
			return nil, nil, failed("--file %q is not a valid pattern: %v", fileGlob, err)
		}
		fileFilter = func(p string) bool {
			a, _ := filepath.Match(fileGlob, p)
			b, _ := filepath.Match(fileGlob, filepath.Base(p))
			return a || b
		}
	}
	return funcFilter, fileFilter, nil
}

// attachedPID returns args with strace's spelling -pPID (and --pPID) of
// patchprof's own -p PID split in two, as the flag package wants it. Only
// patchprof's flags are looked at: the scan ends at "--" or at the program.
func attachedPID(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args)+1)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if pid, ok := strings.CutPrefix(name, "p"); ok && pid != "" && strings.Trim(pid, "0123456789") == "" && fs.Lookup(name) == nil {
			out = append(out, "-p", pid)
			continue
		}
		out = append(out, a)
		if strings.Contains(name, "=") {
			continue
		}
		// A flag that takes a value takes the next argument.
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// isBoolFlag reports whether f is a flag that takes no value (-flag alone).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// runFlags are the flags that shape a run's signals, reports and output.
type runFlags struct {
	attach             int
	duration, interval time.Duration
	save               string
	rf                 reportFlags
	bf                 *blockFlags
	opt                output.Options
	prog               string
	notes              []string // the first notes of the report (setIDNotes)
	lf                 *listenFlags
	sigs               *runSignals // what patchprof's own signals do (signals.go)
}

// run profiles the target with prof and reports, handling patchprof's
// signals: passed on to a started target, or, attached, the end of the
// profile (with --duration). Interim reports come every --interval and
// on SIGUSR1. It returns patchprof's exit status: the target's.
func run(prof *profiler.Profiler, f runFlags, pr *progress, stderr io.Writer) int {
	// Terminal signals reach the target from the terminal itself: patchprof
	// waits for the target and reports. Termination requests are passed on.
	// A handler (not SIG_IGN) keeps the target's inherited dispositions
	// default. Attached, patchprof's signals and the duration end the
	// profile: restore the code, detach, report. The target runs on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if f.sigs == nil {
		f.sigs = watchSignals(newRunSignals(stderr, ""))
	}
	f.sigs.start(f.attach > 0, cancel)
	defer f.sigs.finish()
	if f.attach > 0 && f.duration > 0 {
		go func() {
			select {
			case <-time.After(f.duration):
			case <-ctx.Done():
			}
			cancel()
		}()
	}
	interim := interimReports(prof, f, stderr)
	defer interim()
	stopServe, err := startServe(f.lf, prof, stderr)
	if err != nil {
		return fail(stderr, err)
	}

	pr.step(fmt.Sprintf("planting %d sites in %s", prof.Sites(), f.prog))
	var hits atomic.Uint64
	// A long profile shows its hits so far and its time. A target on the
	// same terminal (a started one, or an attached one in the background)
	// has the line erased before each of its writes (Hooks.Terminal).
	// Without a display nothing reads the hits: the monitor is not asked
	// to gather them, and an idle target's profile (each of patchprof
	// watch's) then wakes nothing.
	var shown *atomic.Uint64
	if pr.enabled {
		shown = &hits
	}
	warn := func(msg string) { fmt.Fprintf(stderr, "patchprof: %s\n", msg) }
	p, res, err := prof.Run(ctx, profiler.Hooks{Hits: shown, Warn: warn, Terminal: pr.terminal(), OnStart: func(pid int) {
		pr.done()
		f.sigs.started(pid)
		if f.attach > 0 {
			// Operators (and tests) need to know when counting starts.
			fmt.Fprintf(stderr, "patchprof: attached to PID %d, %d sites planted; SIGINT (Ctrl-C)%s detaches\n",
				pid, prof.Sites(), map[bool]string{true: " or --duration", false: ""}[f.duration > 0])
			pr.stepCounting(fmt.Sprintf("counting in PID %d", pid), hits.Load, "hits")
			return
		}
		pr.stepCounting(fmt.Sprintf("counting in %s (PID %d)", f.prog, pid), hits.Load, "hits")
	}})
	f.sigs.finish()
	pr.done()
	interim()
	stopServe(p)
	if se := (*monitor.StartError)(nil); errors.As(err, &se) && se.Exit != nil {
		fmt.Fprintf(stderr, "patchprof: %s\n", startFailure(f.prog, se.Exit))
		return profile.ShellStatus(se.Exit.Code, se.Exit.Signal)
	}
	if err != nil {
		return fail(stderr, err)
	}
	if len(f.notes) > 0 {
		p.Notes = append(slices.Clip(f.notes), p.Notes...)
	}
	// Said on its own when the report is elsewhere; a listing on stderr
	// already says it.
	if n := prof.NothingMatched(); slices.Contains(p.Notes, n) && !f.rf.onStderr() {
		fmt.Fprintf(stderr, "patchprof: %s\n", n)
	}
	// A profile or report that could not be written is a failure of
	// patchprof (125), whatever the target's status: the run is lost but
	// for the temporary file the message names.
	// Said last, where it is seen after a listing on stderr.
	status := profile.ShellStatus(res.Exit.Code, res.Exit.Signal)
	var saveErr error
	if f.save != "" {
		saveErr = saveProfile(p, f.save, stderr)
	}
	writeErr := f.rf.write(p, f.opt, stderr)
	if err := f.bf.writeDisasm(stderr, prof, p, f.opt); err != nil {
		fmt.Fprintf(stderr, "patchprof: %v\n", err)
	}
	for _, err := range []error{saveErr, writeErr} {
		if err != nil {
			status = fail(stderr, err)
		}
	}
	return status
}

// interimReports writes a report (with --save: replaces the saved profile)
// every --interval and on SIGUSR1 while the target runs, from the
// profiler's snapshots. The returned function stops them and waits until
// the last one is written.
func interimReports(prof *profiler.Profiler, f runFlags, stderr io.Writer) (stop func()) {
	usr1 := f.sigs.snap
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var tick <-chan time.Time
		if f.interval > 0 {
			t := time.NewTicker(f.interval)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-tick:
			case <-usr1:
			case <-ctx.Done():
				return
			}
			p := prof.Snapshot(ctx)
			if p == nil {
				continue
			}
			if len(f.notes) > 0 {
				p.Notes = append(slices.Clip(f.notes), p.Notes...)
			}
			if f.save != "" {
				if err := saveProfile(p, f.save, stderr); err != nil {
					fmt.Fprintf(stderr, "patchprof: %v\n", err)
				}
				continue
			}
			if err := f.rf.write(p, f.opt, stderr); err != nil {
				fmt.Fprintf(stderr, "patchprof: %v\n", err)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

// processImage returns the executable and the arguments of a running
// process, and where to read the executable when its file is no longer
// the one it runs (replaced or removed since: a new build deployed over
// it): its /proc/PID/exe, which opens the file the process runs.
func processImage(pid int) (path, read string, args []string, err error) {
	dir := "/proc/" + strconv.Itoa(pid)
	link, err := os.Readlink(dir + "/exe")
	if err != nil {
		return "", "", nil, failed("-p %d: cannot read its executable (%v): is it yours, and still running?", pid, err)
	}
	path = strings.TrimSuffix(link, " (deleted)")
	if path != link {
		read = dir + "/exe"
	}
	if b, err := os.ReadFile(dir + "/cmdline"); err == nil {
		args = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	return path, read, args, nil
}

// resolve finds the program as execve would: a name with a slash is a path,
// anything else is looked up in PATH. Its errors carry the status env(1)
// would exit with: 127 for a program not found, 126 for one that cannot be
// run.
func resolve(prog string) (string, error) {
	path := prog
	if !strings.Contains(prog, "/") {
		p, err := exec.LookPath(prog)
		if errors.Is(err, exec.ErrNotFound) {
			return "", notFound("%s: program not found in PATH (give its path, e.g. ./%s)", prog, prog)
		}
		if p != "" {
			path = p
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", notFound("%s: no such file: check the program's path", prog)
		}
		return "", cannotRun("%s: %v", prog, err)
	}
	if st.IsDir() {
		return "", cannotRun("%s is a directory, not a program", prog)
	}
	if m := st.Mode(); !m.IsRegular() {
		// Opening a FIFO to read waits for a writer, and reading a device
		// may wait for ever: refuse them from the mode alone, unopened.
		// execve(2) refuses them too (EACCES).
		return "", cannotRun("%s is not a regular file (%s): give the program's path", prog, profile.FileKind(m))
	}
	if st.Mode()&0o111 == 0 || !executable(path) {
		return "", cannotRun("%s is not executable: chmod +x it", prog)
	}
	if err := checkELF(path, prog); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", failed("%s: %v", prog, err)
	}
	return abs, nil
}

// checkELF refuses, with exitCannotRun, a program that is not an x86-64 ELF
// executable: execve refuses most of them (ENOEXEC), and patchprof can
// profile none (a script runs in its interpreter: profile that). The ELF
// identification and header are those of the ELF gABI ("ELF Header").
func checkELF(path, prog string) error {
	f, err := os.Open(path)
	if err != nil {
		return cannotRun("%s: %v", prog, err)
	}
	defer f.Close()
	var h [20]byte
	n, _ := io.ReadFull(f, h[:])
	if n < 4 || string(h[:4]) != elf.ELFMAG {
		// Said as the profiler says it, with the status of a program
		// that cannot be run.
		ue := profiler.NotELF(prog)
		ue.Status = exitCannotRun
		return ue
	}
	if n < len(h) || elf.Class(h[elf.EI_CLASS]) != elf.ELFCLASS64 || elf.Data(h[elf.EI_DATA]) != elf.ELFDATA2LSB ||
		elf.Machine(binary.LittleEndian.Uint16(h[18:])) != elf.EM_X86_64 {
		bits := map[elf.Class]string{elf.ELFCLASS32: "32-bit", elf.ELFCLASS64: "64-bit"}[elf.Class(h[elf.EI_CLASS])]
		return cannotRun("%s: not an x86-64 ELF executable (found %s %v): patchprof profiles x86-64 programs only",
			prog, bits, elf.Machine(binary.LittleEndian.Uint16(h[18:])))
	}
	if t := elf.Type(binary.LittleEndian.Uint16(h[16:])); t != elf.ET_EXEC && t != elf.ET_DYN {
		return cannotRun("%s: not an executable ELF file (%v): link it into a program", prog, t)
	}
	return nil
}

// libFlag collects the --lib patterns.
type libFlag []string

func (f *libFlag) String() string { return strings.Join(*f, ",") }

func (f *libFlag) Set(v string) error {
	if _, err := filepath.Match(v, ""); err != nil {
		return fmt.Errorf("not a valid pattern: %w", err)
	}
	*f = append(*f, v)
	return nil
}
