package profiler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/symtab"
)

// A Config says what to count and where.
type Config struct {
	Lines, Funcs bool // count source lines, function calls (at least one)
	Blocks       bool // report basic blocks, edges, branches and calls (--blocks)
	Calls        bool // report the call graph (--calls; implied by Blocks)
	Std          bool // include the Go runtime and standard library
	// FuncFilter and FileFilter keep functions and source files (nil:
	// all).
	FuncFilter, FileFilter func(string) bool
	// Libs are the --lib patterns: when set, exactly the libraries whose
	// path or base name matches one are profiled.
	Libs []string
	// Source reads a source file's lines, as the listing finds it: the
	// line model reads case labels from it. Nil reads none.
	Source func(path string) ([]string, bool)
	// NoFollow profiles only the first process.
	NoFollow bool
	// Engine and Pin are monitor.Options' Engine and Pin.
	Engine string
	Pin    bool
	// Time samples the CPU time of every thread of the target (--time),
	// SampleRate times per second of its CPU time (0: the default).
	Time       bool
	SampleRate int
	// TimeFallback says what --time does where the kernel refuses perf
	// events: FallbackPtrace (the default, "") samples by interrupting
	// the threads, FallbackNone runs without time.
	TimeFallback string
	// Cache reads each file's line table and subprograms from the
	// analysis cache in CacheDir (anacache.DefaultDir's when empty), and
	// stores them there after computing them; false computes them every
	// time (--no-cache).
	Cache    bool
	CacheDir string
}

// A Target is the program to profile: started from Path with Args, or
// the running process Attach.
type Target struct {
	Path   string   // the executable, absolute
	Args   []string // its argv (for a started program, what it runs with)
	Attach int      // the PID to attach to; 0 starts Path
	Name   string   // how messages name it ("./prog", "/bin/x (PID 12)")
	// Read, if set, is where the executable is read instead of Path: an
	// attached process's /proc/PID/exe when its file was replaced or
	// removed since it started (Path is then what it was started as).
	Read string
}

// A UserError is an error the user caused and can fix (a program without
// what was asked for, a selection that matches nothing, a bad flag): its
// message is one line that says what to do. A command prints it as that
// line and exits with Status, or with its own failure status when Status
// is 0 (patchprof's 125; 126 and 127 say, as for env(1), that the program
// cannot be run or was not found).
type UserError struct {
	Msg    string
	Status int
}

func (e *UserError) Error() string { return e.Msg }

// A Profiler is one profiling run, opened and then run once.
type Profiler struct {
	cfg      Config
	target   Target
	sel      *selection
	root     *module
	launcher bool // the target is a system program run as a launcher
	pending  bool // nothing matched in the executable: libraries may match
	mode     string

	// Snapshot's requests: the replies waiting, and a wake-up of the
	// monitor, which serves them between two stops; done is closed when
	// the run has ended.
	mu      sync.Mutex
	waiting []chan *profile.Profile
	req     chan struct{}
	done    chan struct{}

	tl *timeline // the sampled time (--time), nil without
}

// defaults decides, once for every caller, what a run counts when its
// Config does not say: lines when neither lines nor functions are asked
// for; and block counts need function entries (an activation opens at
// each), with lines still the default.
func (c *Config) defaults() {
	if !c.Lines && !c.Funcs {
		c.Lines = true
	}
	if c.Blocks {
		c.Calls = true
	}
	// A function's callers account for its entries.
	if c.Calls {
		c.Funcs = true
	}
}

// Open reads the target's executable and plans what to plant in it. The
// returned Profiler holds the files open until Close.
func Open(cfg Config, t Target) (*Profiler, error) {
	cfg.defaults()
	sel := &selection{lines: cfg.Lines, funcs: cfg.Funcs, std: cfg.Std, blocks: cfg.Blocks, calls: cfg.Calls,
		funcFilter: cfg.FuncFilter, fileFilter: cfg.FileFilter, libs: cfg.Libs, source: cfg.Source,
		jump: cfg.Engine == monitor.EngineJump, cache: openCache(cfg), callTraps: t.Attach == 0}
	read := t.Path
	if t.Read != "" {
		read = t.Read
	}
	sym, err := symtab.Open(read)
	if err != nil {
		return nil, describeELFError(t.Name, err)
	}
	clipToSections(sym)
	// A system program (sh, env, make) without what was asked for is run as
	// a launcher: nothing is counted in it, and the programs it starts are
	// profiled.
	launcher := false
	lt, lerr := sel.readLines(sym)
	if lerr != nil {
		lt = nil
		if cfg.Lines && (!isSystem(t.Path) || cfg.NoFollow) {
			sym.Close()
			if errors.Is(lerr, lineinfo.ErrNoLineInfo) {
				return nil, &UserError{Msg: fmt.Sprintf("%s has no DWARF line information: rebuild it with -g, or use --funcs", t.Name)}
			}
			return nil, &UserError{Msg: fmt.Sprintf("%s: cannot read its line information (%v): use --funcs", t.Name, lerr)}
		}
		launcher = cfg.Lines
	}
	if cfg.Funcs && len(sym.Funcs) == 0 {
		if !isSystem(t.Path) || cfg.NoFollow {
			sym.Close()
			return nil, &UserError{Msg: fmt.Sprintf("%s has no function symbols (stripped?): use an unstripped build, or --lines if it has DWARF", t.Name)}
		}
		launcher = true
	}
	popt := sel.planOptions(sym, lt)
	if launcher {
		popt = breakpoint.PlanOptions{}
	}
	popt.Jumps = sel.jump
	var storeTargets func(*breakpoint.Plan)
	if sel.jump && !launcher {
		storeTargets = sel.branchTargets(sym)
	}
	plan := breakpoint.NewPlan(sym, lt, popt)
	if storeTargets != nil {
		storeTargets(plan)
	}
	plan.Table.SetCallTraps(sel.callTraps)
	// Nothing selected in a dynamically linked program may still select code
	// in its libraries, loaded at start or later (like gdb's pending
	// breakpoints); a static one has nowhere else to look.
	pending := plan.Table.Len() == 0 && !launcher
	if pending && !dynamic(read) {
		plan.Wait()
		sym.Close()
		return nil, &UserError{Msg: fmt.Sprintf("nothing to count in %s: no code matches the selection (check --func and --file)", t.Name)}
	}
	mode := profile.ModeLines
	switch {
	case cfg.Lines && cfg.Funcs:
		mode = profile.ModeLinesFuncs
	case cfg.Funcs:
		mode = profile.ModeFuncs
	}
	root := &module{path: sym.Path, shown: t.Path, sym: sym, lt: lt, plan: plan, counted: !launcher, callee: popt.CalleeName, got: gotNames(popt)}
	if sel.calls && !sel.jump {
		root.countIndirect()
	}
	if !sel.jump {
		plan.CountEntries(sym)
	}
	root.jumps = plan.Jumps
	return &Profiler{
		cfg: cfg, target: t, sel: sel, launcher: launcher, pending: pending, mode: mode,
		root: root,
		req:  make(chan struct{}, 1), done: make(chan struct{}),
	}, nil
}

// Sites returns how many sites are planted in the executable so far, and
// in the libraries and programs it loaded.
func (p *Profiler) Sites() int { return p.sel.planted(p.root.plan) }

// Close releases the files Open and the run opened.
func (p *Profiler) Close() error {
	p.sel.cache.wait()
	p.root.plan.Wait() // its line model reads the file
	return errors.Join(p.root.sym.Close(), p.sel.close())
}

// Hooks are a front end's part in a run. All are optional.
type Hooks struct {
	// OnStart is called once the target runs (or is attached), with its
	// PID, on the monitor's thread.
	OnStart func(pid int)
	// Hits, if set, counts the traps at sites as they happen (monitor
	// Options.Hits), for a progress display.
	Hits *atomic.Uint64
	// Warn, if set, is told in one line, on the monitor's thread, of a
	// problem that does not stop the run: the kernel refused to sample
	// CPU time (--time), which the run goes on without.
	Warn func(msg string)
	// Terminal, if set, is told when the target uses patchprof's terminal
	// (monitor Options.Terminal), so a progress line never mixes with the
	// target's output.
	Terminal *monitor.Terminal
}

// Run profiles the target until it exits, or, attached, until ctx is done
// (then the code is restored and the process left running). It returns
// the profile and the monitor's result (the exit status is
// profile.ShellStatus(res.Exit.Code, res.Exit.Signal)).
func (p *Profiler) Run(ctx context.Context, h Hooks) (*profile.Profile, *monitor.Result, error) {
	var stop chan struct{}
	if p.target.Attach > 0 {
		stop = make(chan struct{})
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-ctx.Done():
				close(stop)
			case <-done:
			}
		}()
	}
	defer close(p.done)
	onStart, layout, isamp, endTime := p.timeHooks(h)
	res, err := monitor.Run(monitor.Options{
		// The monitor serves snapshots on its own thread, between stops:
		// SnapshotReq asks, Snapshot answers with the counts of the moment.
		SnapshotReq: p.req,
		Snapshot: func(bias uint64, c monitor.Counts) {
			p.mu.Lock()
			waiting := p.waiting
			p.waiting = nil
			p.mu.Unlock()
			if len(waiting) == 0 {
				return
			}
			prof := p.interim(bias, c)
			// Each reader owns its copy (readers sort, encode and add notes
			// concurrently): the copies are made before the original is
			// handed out. The channels are buffered: never blocks the monitor.
			for _, w := range waiting[1:] {
				w <- prof.Clone()
			}
			waiting[0] <- prof
		},
		Path:      p.target.Path,
		Args:      p.target.Args,
		Attach:    p.target.Attach,
		NoFollow:  p.cfg.NoFollow,
		Stop:      stop,
		Table:     p.root.plan.Table,
		Entry:     p.root.sym.Entry,
		MaySetGS:  maySetGS(p.root.sym.Path, p.root.sym),
		Go:        p.goRuntime(),
		Images:    p.sel.image,
		Engine:    p.cfg.Engine,
		Pin:       p.cfg.Pin,
		OnStart:   onStart,
		Layout:    layout,
		Interrupt: isamp,
		Hits:      h.Hits,
		Terminal:  h.Terminal,
	})
	if err != nil {
		endTime(nil)
		return nil, nil, err
	}
	prof := buildProfile(p.root, p.sel, res, p.mode, p.target.Args)
	endTime(prof)
	if res.Holds > 0 {
		prof.Notes = append(prof.Notes, fmt.Sprintf("other threads were held %d times while a site's original byte was in place (classic cycle)", res.Holds))
	}
	prof.Notes = append(prof.Notes, p.jumpNotes(res)...)
	prof.Notes = append(prof.Notes, res.Notes...)
	prof.Notes = append(prof.Notes, p.sel.cache.Notes()...)
	if res.ClassicSites > 0 {
		prof.Notes = append(prof.Notes, fmt.Sprintf("%d sites could not be relocated out of line and used the classic cycle", res.ClassicSites))
	}
	if p.launcher {
		prof.Notes = append(prof.Notes, launcherNote(p.target.Path))
	}
	prof.Exit.Changed = res.Changed
	if res.Degraded != nil {
		// Failures that left the counts incomplete (a site not re-armed, a
		// restore that failed): said in the report, one note each.
		for _, line := range strings.Split(res.Degraded.Error(), "\n") {
			prof.Notes = append(prof.Notes, "counts may be incomplete: "+line)
		}
	}
	if p.pending && len(prof.Modules) == 0 {
		prof.Notes = append(prof.Notes, p.NothingMatched())
	}
	return prof, res, nil
}

// NothingMatched is the note of a run in which no code of the program or
// its libraries matched the selection.
func (p *Profiler) NothingMatched() string {
	return fmt.Sprintf("no code in %s or the libraries it loaded matched the selection (check --func, --file and --lib)", p.target.Name)
}

// Snapshot returns the profile of the moment while Run runs (exit
// "running"), served between two stops of the target so that no hit is
// lost or counted twice; it waits for the next stop. It returns nil when
// the run has ended or ctx is done first.
func (p *Profiler) Snapshot(ctx context.Context) *profile.Profile {
	r := make(chan *profile.Profile, 1)
	p.mu.Lock()
	p.waiting = append(p.waiting, r)
	p.mu.Unlock()
	select {
	case p.req <- struct{}{}:
	default: // a request is already pending; it serves every waiting reply
	}
	select {
	case prof := <-r:
		return prof
	case <-p.done:
		return nil
	case <-ctx.Done():
		return nil
	}
}

// interim builds the profile of the moment, on the monitor's thread.
func (p *Profiler) interim(bias uint64, c monitor.Counts) *profile.Profile {
	prof := buildProfile(p.root, p.sel, &monitor.Result{Bias: bias, Counts: c}, p.mode, p.target.Args)
	if p.launcher {
		prof.Notes = append(prof.Notes, launcherNote(p.target.Path))
	}
	prof.Exit = profile.Exit{Running: true}
	if p.tl != nil && (p.tl.smp != nil || p.tl.byPtrace) {
		p.tl.addTime(prof, p.root, p.sel)
	}
	return prof
}

// NotELF is the error of prog, a file that is not an ELF file at all (a
// script, a text file).
func NotELF(prog string) *UserError {
	return &UserError{Msg: prog + " is not an ELF executable: patchprof profiles compiled Linux x86-64 programs (for a script, profile its interpreter)"}
}

// describeELFError words an error of symtab.Open for the user. The message
// names prog once: a *symtab.FormatError names the path itself, so only
// its parts are used (not "X: X: EOF").
func describeELFError(prog string, err error) error {
	switch {
	case errors.Is(err, symtab.ErrNotELF):
		return NotELF(prog)
	}
	var fe *symtab.FormatError
	if !errors.As(err, &fe) {
		return &UserError{Msg: fmt.Sprintf("%s: %v", prog, err)}
	}
	switch {
	case errors.Is(err, symtab.ErrNotX86_64):
		return &UserError{Msg: fmt.Sprintf("%s: %v (%s): patchprof profiles x86-64 programs only", prog, fe.Err, fe.Msg)}
	case errors.Is(err, symtab.ErrNotExecutable):
		return &UserError{Msg: fmt.Sprintf("%s: %v (%s): give a program, not an object file or a core dump", prog, fe.Err, fe.Msg)}
	}
	return &UserError{Msg: fmt.Sprintf("%s: %s (%v): is the file complete? Rebuild it or copy it again", prog, cmp.Or(fe.Msg, "corrupt ELF file"), fe.Err)}
}

// A Module is one profiled file as a front end may inspect it after a run
// (an annotated disassembly, say): the executable first, then every
// library and program that counted something, in the order mapped.
type Module struct {
	Name  string // "" for the executable, else its path (profile's module name)
	Sym   *symtab.File
	Lines *lineinfo.Table // nil without line information
	Plan  *breakpoint.Plan
	// Counts are the counts of the profile Run returned, as it reported
	// them (derived under the in-process engine); nil before.
	Counts *breakpoint.Counts
}

// Modules returns the profiled modules. They stay valid until Close.
func (p *Profiler) Modules() []Module {
	out := []Module{{Sym: p.root.sym, Lines: p.root.lt, Plan: p.root.plan, Counts: p.root.counts}}
	for _, m := range p.sel.mods {
		if m.counted && m.path != p.root.sym.Path {
			out = append(out, Module{Name: m.path, Sym: m.sym, Lines: m.lt, Plan: m.plan, Counts: m.counts})
		}
	}
	return out
}
