// Command patchprof counts how many times each source line and function of an
// unmodified Linux x86-64 program runs, by patching int3 breakpoints into it
// under ptrace (Matt Bishop's execution monitor), and prints the source
// annotated with the counts, even when the program crashes.
//
// Usage:
//
//	patchprof [flags] [--] PROGRAM [ARGS...]
//	patchprof report [flags] FILE
//
// See docs/cli.md for the flags. This package only parses flags and wires the
// other packages together.
package main

import (
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/symtab"
)

// exitUsage is patchprof's own failure status (bad flags, bad program, ptrace
// refused), distinct from the target's statuses it passes through.
const exitUsage = 2

func main() {
	monitor.ExitIfWaker()
	os.Exit(Main(os.Args[1:], os.Stderr))
}

// A userError is a mistake the user can fix; it is printed as one line.
type userError struct{ msg string }

func (e *userError) Error() string { return e.msg }

func fail(stderr io.Writer, err error) int {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "\n", " ")
	fmt.Fprintf(stderr, "patchprof: %s\n", msg)
	return exitUsage
}

func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "usage: patchprof [flags] [--] PROGRAM [ARGS...]\n       patchprof [flags] -p PID\n       patchprof report [flags] FILE...\n       patchprof merge [--force] -o OUT FILE...\n\nflags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
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
	fs := flag.NewFlagSet("patchprof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
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
		rf                reportFlags
	)
	fs.BoolVar(&lines, "lines", false, "count source lines (needs DWARF line info); the default")
	fs.BoolVar(&funcs, "funcs", false, "count calls of every function in the symbol table")
	fs.StringVar(&funcRE, "func", "", "plant only in functions whose name matches `REGEXP`")
	fs.StringVar(&fileGlob, "file", "", "plant only in source files whose path or base name matches `GLOB`")
	fs.BoolVar(&std, "std", false, "also profile the Go runtime and standard library")
	fs.StringVar(&save, "save", "", "write the raw profile as JSON to `FILE`")
	fs.IntVar(&attach, "p", 0, "attach to the running process `PID` instead of starting a program")
	fs.StringVar(&engine, "engine", monitor.EngineXOL, "how a hit is served: `xol` (the instruction runs out of line: one stop, no thread held) or classic (Bishop's restore, single-step, re-arm)")
	fs.BoolVar(&pin, "pin", true, "run patchprof's tracer and a started target on one CPU, so every stop is a cheap same-CPU hand-over; the target then sees one CPU (nproc, Go's GOMAXPROCS): --pin=false keeps its CPU mask, for a CPU-bound multi-threaded target or one that sizes its work by the CPU count; ignored with -p")
	fs.Var(&libs, "lib", "profile exactly the shared libraries whose path or base name matches `GLOB` (repeatable; system libraries included); default: every library with the requested information outside the system directories")
	fs.BoolVar(&noFollow, "no-follow", false, "profile only the first process: forked children run untraced with none of patchprof's bytes")
	fs.DurationVar(&interval, "interval", 0, "while the target runs, print the report (with --save: replace the saved profile) every `D`; SIGUSR1 does it at once")
	fs.DurationVar(&duration, "duration", 0, "with -p: detach after `D` (e.g. 30s, 2m); default: until the target exits or patchprof gets SIGINT/SIGTERM/SIGHUP")
	rf.register(fs)
	bf := registerBlockFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(fs, os.Stdout)
			return 0
		}
		return fail(stderr, &userError{fmt.Sprintf("%v (see patchprof -h)", err)})
	}
	switch {
	case attach < 0:
		return fail(stderr, &userError{fmt.Sprintf("-p %d: a PID is a positive number", attach)})
	case attach > 0 && fs.NArg() > 0:
		return fail(stderr, &userError{"-p PID attaches to a running process: give either -p or a program to run, not both"})
	case attach == 0 && fs.NArg() == 0:
		return fail(stderr, &userError{"no program to run: patchprof [flags] [--] PROGRAM [ARGS...], or -p PID (see patchprof -h)"})
	case engine != monitor.EngineXOL && engine != monitor.EngineClassic:
		return fail(stderr, &userError{fmt.Sprintf("--engine %q: want xol or classic", engine)})
	case interval < 0:
		return fail(stderr, &userError{fmt.Sprintf("--interval %v: give a positive duration", interval)})
	case duration < 0:
		return fail(stderr, &userError{fmt.Sprintf("--duration %v: give a positive duration", duration)})
	case duration > 0 && attach == 0:
		return fail(stderr, &userError{"--duration only applies with -p PID (a started program is profiled to its end)"})
	}
	if err := bf.apply(&lines, &funcs); err != nil {
		return fail(stderr, err)
	}
	if !lines && !funcs {
		lines = true
	}
	opt, err := rf.options()
	if err != nil {
		return fail(stderr, err)
	}
	var funcFilter func(string) bool
	if funcRE != "" {
		re, err := regexp.Compile(funcRE)
		if err != nil {
			return fail(stderr, &userError{fmt.Sprintf("--func %q is not a valid regular expression: %v", funcRE, err)})
		}
		funcFilter = re.MatchString
	}
	var fileFilter func(string) bool
	if fileGlob != "" {
		if _, err := filepath.Match(fileGlob, ""); err != nil {
			return fail(stderr, &userError{fmt.Sprintf("--file %q is not a valid pattern: %v", fileGlob, err)})
		}
		fileFilter = func(p string) bool {
			a, _ := filepath.Match(fileGlob, p)
			b, _ := filepath.Match(fileGlob, filepath.Base(p))
			return a || b
		}
	}

	if rf.format != "listing" && rf.out == "" {
		return fail(stderr, &userError{fmt.Sprintf("--format %s: give -o PATH (the target's output goes to stdout)", rf.format)})
	}
	if err := checkWritable("-o", rf.out); err != nil {
		return fail(stderr, err)
	}
	if err := checkWritable("--save", save); err != nil {
		return fail(stderr, err)
	}
	// A step that takes more than a second shows on a terminal's stderr;
	// anything patchprof itself writes there ends the step first.
	pr := newProgress(stderr)
	defer pr.done()
	stderr = pr
	var (
		prog, path string
		targv      []string
	)
	if attach > 0 {
		if err := monitor.CheckAttach(attach); err != nil {
			return fail(stderr, err)
		}
		var err error
		path, targv, err = processImage(attach)
		if err != nil {
			return fail(stderr, err)
		}
		prog = fmt.Sprintf("%s (PID %d)", path, attach)
	} else {
		prog = fs.Arg(0)
		targv = fs.Args()
		var err error
		path, err = resolve(prog)
		if err != nil {
			return fail(stderr, err)
		}
	}
	sel := &selection{lines: lines, funcs: funcs, std: std, funcFilter: funcFilter, fileFilter: fileFilter, libs: libs}
	sel.blocks = bf.blocks
	sel.source = sourceReader(opt)
	defer sel.close()
	pr.step("reading " + prog)
	sym, err := symtab.Open(path)
	if err != nil {
		return fail(stderr, describeELFError(prog, err))
	}
	defer sym.Close()
	// A system program (sh, env, make) without what was asked for is run as
	// a launcher: nothing is counted in it, and the programs it starts are
	// profiled.
	launcher := false
	lt, lerr := lineinfo.Read(path)
	if lerr != nil {
		lt = nil
		if lines && (!isSystem(path) || noFollow) {
			if errors.Is(lerr, lineinfo.ErrNoLineInfo) {
				return fail(stderr, &userError{fmt.Sprintf("%s has no DWARF line information: rebuild it with -g, or use --funcs", prog)})
			}
			return fail(stderr, &userError{fmt.Sprintf("%s: cannot read its line information (%v): use --funcs", prog, lerr)})
		}
		launcher = lines
	}
	if funcs && len(sym.Funcs) == 0 {
		if !isSystem(path) || noFollow {
			return fail(stderr, &userError{fmt.Sprintf("%s has no function symbols (stripped?): use an unstripped build, or --lines if it has DWARF", prog)})
		}
		launcher = true
	}
	popt := sel.planOptions(sym, lt)
	if launcher {
		popt = breakpoint.PlanOptions{}
	}
	plan := breakpoint.NewPlan(sym, lt, popt)
	// Nothing selected in a dynamically linked program may still select code
	// in its libraries, loaded at start or later (like gdb's pending
	// breakpoints); a static one has nowhere else to look.
	pending := plan.Table.Len() == 0 && !launcher
	if pending && !dynamic(path) {
		return fail(stderr, &userError{fmt.Sprintf("nothing to count in %s: no code matches the selection (check --func and --file)", prog)})
	}
	root := &module{path: sym.Path, sym: sym, lt: lt, plan: plan, counted: !launcher}

	// Terminal signals reach the target from the terminal itself: patchprof
	// waits for the target and reports. Termination requests are passed on.
	// A handler (not SIG_IGN) keeps the target's inherited dispositions default.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, termSignals...)
	defer signal.Stop(sigs)
	pidc := make(chan int, 1)
	var stop chan struct{}
	if attach > 0 {
		// Attached, patchprof's signals and the duration end the profile:
		// restore the code, detach, report. The target runs on.
		stop = make(chan struct{})
		go func() {
			var timeout <-chan time.Time
			if duration > 0 {
				timeout = time.After(duration)
			}
			select {
			case <-sigs:
			case <-timeout:
			}
			close(stop)
		}()
	} else {
		go forwardSignals(sigs, pidc)
	}

	// Interim reports: every --interval, and on SIGUSR1, without stopping.
	snapReq := make(chan struct{}, 1)
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, snapshotSignals...)
	defer signal.Stop(usr1)
	go func() {
		var tick <-chan time.Time
		if interval > 0 {
			t := time.NewTicker(interval)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-tick:
			case <-usr1:
			}
			select {
			case snapReq <- struct{}{}:
			default: // one is already pending
			}
		}
	}()
	mode := profile.ModeLines
	switch {
	case lines && funcs:
		mode = profile.ModeLinesFuncs
	case funcs:
		mode = profile.ModeFuncs
	}
	snapshot := func(bias uint64) {
		p := buildProfile(root, sel, &monitor.Result{Bias: bias}, mode, targv)
		if launcher {
			p.Notes = append(p.Notes, launcherNote(path))
		}
		p.Exit = profile.Exit{Running: true}
		if save != "" {
			if err := p.Save(save); err != nil {
				fmt.Fprintf(stderr, "patchprof: cannot save the profile: %v\n", err)
			}
			return
		}
		if err := rf.write(p, opt, stderr); err != nil {
			fmt.Fprintf(stderr, "patchprof: %v\n", err)
		}
	}

	pr.step(fmt.Sprintf("planting %d sites in %s", plan.Table.Len(), prog))
	res, err := monitor.Run(monitor.Options{
		SnapshotReq: snapReq,
		Snapshot:    snapshot,
		Path:        path,
		Args:        targv,
		Attach:      attach,
		NoFollow:    noFollow,
		Stop:        stop,
		Table:       plan.Table,
		Entry:       sym.Entry,
		Images:      sel.image,
		Engine:      engine,
		Pin:         pin,
		OnStart: func(pid int) {
			pr.done()
			pidc <- pid
			if attach > 0 {
				// Operators (and tests) need to know when counting starts.
				fmt.Fprintf(stderr, "patchprof: attached to PID %d, %d sites planted; SIGINT (Ctrl-C)%s detaches\n",
					pid, sel.planted(plan), map[bool]string{true: " or --duration", false: ""}[duration > 0])
			}
		},
	})
	if err != nil {
		return fail(stderr, err)
	}
	p := buildProfile(root, sel, res, mode, targv)
	if res.Holds > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("other threads were held %d times while a site's original byte was in place (classic cycle)", res.Holds))
	}
	if res.ClassicSites > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d sites could not be relocated out of line and used the classic cycle", res.ClassicSites))
	}
	if launcher {
		p.Notes = append(p.Notes, launcherNote(path))
	}
	if pending && len(p.Modules) == 0 {
		msg := fmt.Sprintf("no code in %s or the libraries it loaded matched the selection (check --func, --file and --lib)", prog)
		p.Notes = append(p.Notes, msg)
		fmt.Fprintf(stderr, "patchprof: %s\n", msg)
	}
	if save != "" {
		if err := p.Save(save); err != nil {
			fmt.Fprintf(stderr, "patchprof: cannot save the profile: %v\n", err)
		}
	}
	if err := rf.write(p, opt, stderr); err != nil {
		fmt.Fprintf(stderr, "patchprof: %v\n", err)
	}
	if err := bf.writeDisasm(stderr, root, sel, opt); err != nil {
		fmt.Fprintf(stderr, "patchprof: %v\n", err)
	}
	return res.Exit.ShellStatus()
}

func forwardSignals(sigs <-chan os.Signal, pidc <-chan int) {
	pid := 0
	for {
		select {
		case p := <-pidc:
			pid = p
		case s := <-sigs:
			if pid != 0 {
				passOn(pid, s)
			}
		}
	}
}

// checkWritable fails early, before the target runs, when a report or profile
// could not be written where the user asked.
func checkWritable(flag, path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return &userError{fmt.Sprintf("%s %s: directory %s does not exist", flag, path, dir)}
	}
	if !writable(dir) {
		return &userError{fmt.Sprintf("%s %s: directory %s is not writable", flag, path, dir)}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return &userError{fmt.Sprintf("%s %s is a directory: give a file name", flag, path)}
	}
	return nil
}

// isGo reports whether the executable was built by the Go toolchain, whose
// functions re-run their stack-check prologue after a stack growth.
func isGo(sym *symtab.File) bool {
	for _, f := range sym.Funcs {
		if f.Name == "runtime.morestack" || f.Name == "runtime.morestack.abi0" {
			return true
		}
	}
	return false
}

// goAutogenerated is the file the Go toolchain gives to compiler-made code
// (wrappers, equality functions).
const goAutogenerated = "<autogenerated>"

// goStdName reports whether a Go symbol belongs to the runtime or standard
// library by its package path: a first path element without a dot, other than
// main ("sync/atomic.StoreUintptr", "runtime.asyncPreempt2.abi0"), or a type
// descriptor's helper ("type:.eq.main.T").
func goStdName(name string) bool {
	if strings.HasPrefix(name, "type:") || strings.HasPrefix(name, "go:") {
		return true
	}
	pkg := name
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		if j := strings.Index(pkg[i:], "."); j >= 0 {
			pkg = pkg[:i+j]
		}
	} else if j := strings.Index(pkg, "."); j >= 0 {
		pkg = pkg[:j]
	}
	first, _, _ := strings.Cut(pkg, "/")
	return first != "main" && !strings.Contains(first, ".")
}

// processImage returns the executable and the arguments of a running process.
func processImage(pid int) (string, []string, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	path, err := os.Readlink(dir + "/exe")
	if err != nil {
		return "", nil, &userError{fmt.Sprintf("-p %d: cannot read its executable (%v): is it yours, and still running?", pid, err)}
	}
	path = strings.TrimSuffix(path, " (deleted)")
	var args []string
	if b, err := os.ReadFile(dir + "/cmdline"); err == nil {
		args = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	return path, args, nil
}

// resolve finds the program as execve would: a name with a slash is a path,
// anything else is looked up in PATH.
func resolve(prog string) (string, error) {
	path := prog
	if !strings.Contains(prog, "/") {
		p, err := exec.LookPath(prog)
		if err != nil {
			if errors.Is(err, exec.ErrNotFound) {
				return "", &userError{fmt.Sprintf("%s: program not found in PATH (give its path, e.g. ./%s)", prog, prog)}
			}
			path = p
		} else {
			path = p
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", &userError{fmt.Sprintf("%s: no such file: check the program's path", prog)}
		}
		return "", &userError{fmt.Sprintf("%s: %v", prog, err)}
	}
	if st.IsDir() {
		return "", &userError{fmt.Sprintf("%s is a directory, not a program", prog)}
	}
	if st.Mode()&0o111 == 0 || !executable(path) {
		return "", &userError{fmt.Sprintf("%s is not executable: chmod +x it", prog)}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", &userError{fmt.Sprintf("%s: %v", prog, err)}
	}
	return abs, nil
}

func describeELFError(prog string, err error) error {
	switch {
	case errors.Is(err, symtab.ErrNotELF):
		return &userError{fmt.Sprintf("%s is not an ELF executable: patchprof profiles compiled Linux x86-64 programs (for a script, profile its interpreter)", prog)}
	case errors.Is(err, symtab.ErrNotX86_64):
		return &userError{fmt.Sprintf("%s: %v: patchprof profiles x86-64 programs only", prog, err)}
	}
	return &userError{fmt.Sprintf("%s: %v", prog, err)}
}

// launcherNote says why nothing was counted in the target itself.
func launcherNote(path string) string {
	return fmt.Sprintf("%s is a system program without the requested information: nothing was counted in it, only in the programs it started", path)
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

// dynamic reports whether the program at path has a dynamic linker
// (PT_INTERP), so libraries can bring more code.
func dynamic(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}
