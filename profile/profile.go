package profile

import (
	"cmp"
	"slices"
	"strings"
)

// Version is the profile format version this package writes. Load reads it,
// version 2 (which had no sampled time) and version 1 (which had no modules
// either: everything belonged to the executable), and rejects any other
// with an error wrapping ErrVersion.
const Version = 3

// oldestVersion is the oldest format version Load still reads.
const oldestVersion = 1

// The values of Module.Kind.
const (
	ModuleExecutable = "executable" // a program some traced process exec'd
	ModuleLibrary    = "library"    // a shared library loaded at start or by dlopen
)

// The values of Profile.Mode.
const (
	ModeLines      = "lines"       // source lines were counted
	ModeFuncs      = "funcs"       // function entries were counted
	ModeLinesFuncs = "lines,funcs" // both
)

// The values of Site.Kind.
const (
	KindLine     = "line"      // the site is the address of a line-table row
	KindFunc     = "func"      // the site is a function entry
	KindLineFunc = "line,func" // the site is both
)

// A Profile is the result of one monitored run: what ran, how it ended, and
// how many times each planted line and function was entered.
type Profile struct {
	// Version is the format version; Save writes Version.
	Version int `json:"version"`
	// Executable is the absolute path of the profiled executable.
	Executable string `json:"executable"`
	// BuildID is the hex build ID of the executable ("" if it has none).
	BuildID string `json:"build_id,omitempty"`
	// Args is the target's argv, argv[0] included.
	Args []string `json:"args"`
	// Mode says what was counted: ModeLines, ModeFuncs or ModeLinesFuncs.
	Mode string `json:"mode"`
	// Exit is how the target ended.
	Exit Exit `json:"exit"`
	// Lines holds every source line that has code and was planted, with
	// count 0 for lines that never ran.
	Lines []Line `json:"lines"`
	// Functions holds every planted function, with count 0 for functions
	// never called.
	Functions []Function `json:"functions"`
	// Sites holds the raw trap count of every planted address.
	Sites []Site `json:"sites"`
	// Dropped lists the line-table rows that were not planted, and why.
	Dropped []Dropped `json:"dropped,omitempty"`
	// Notes are remarks for the reader of the report, one sentence each,
	// without the "note: " prefix.
	Notes []string `json:"notes,omitempty"`
	// Modules lists the other ELF files whose code was counted: shared
	// libraries, and programs that traced processes exec'd. Lines,
	// functions, sites and dropped rows name their module by path; an empty
	// module is Executable.
	Modules []Module `json:"modules,omitempty"`
	// Blocks holds every basic block of the block-counted functions
	// (--blocks), with count 0 for blocks that never ran.
	Blocks []Block `json:"blocks,omitempty"`
	// Edges holds every edge between those blocks, with how often it was
	// taken.
	Edges []Edge `json:"edges,omitempty"`
	// Branches holds the outcomes of every conditional branch of the
	// block-counted functions whose jump is on a counted source line, as
	// gcov -b reports them per line.
	Branches []Branch `json:"branches,omitempty"`
	// Calls holds every call instruction of the block-counted functions
	// (--blocks), with how often the callee returned.
	Calls []Call `json:"calls,omitempty"`
	// Arcs holds the call graph (--calls): how often each counted call
	// site called each function, and per function the calls from sites
	// that were not counted or whose target is not known.
	Arcs []Arc `json:"arcs,omitempty"`
	// Time is the CPU time sampled during the run (--time); nil when it
	// was not sampled.
	Time *Time `json:"time,omitempty"`
	// Samples lists the sampled addresses of the profiled code, with their
	// samples and time (--time).
	Samples []Sample `json:"samples,omitempty"`
	// Stacks lists the sampled call chains, with their samples and
	// time (--time): the same samples as Samples, by chain.
	Stacks []Stack `json:"stacks,omitempty"`
	// Instances holds, for the functions that share their source lines
	// with others (the instances of a C++ template), each one's own line
	// counts; Lines holds their sums.
	Instances []Instance `json:"instances,omitempty"`
	// Sources lists the source files whose contents at the build the
	// line tables record (DWARF 5 MD5 digests), so that a report can tell
	// a source changed since.
	Sources []Source `json:"sources,omitempty"`
}

// A Module is an ELF file other than the executable whose code was counted.
type Module struct {
	// Path is the absolute path of the file.
	Path string `json:"path"`
	// BuildID is its hex build ID ("" if it has none).
	BuildID string `json:"build_id,omitempty"`
	// Kind is ModuleExecutable or ModuleLibrary.
	Kind string `json:"kind"`
}

// An Exit is how the target ended: either it exited with Code, or Signal
// killed it, possibly with the place of the fault.
type Exit struct {
	// Code is the exit code when the target exited; nil when a signal
	// killed it.
	Code *int `json:"code,omitempty"`
	// Detached is true when profiling ended with the target still running
	// (patchprof attached to it with -p and detached); then there is no
	// code and no signal.
	Detached bool `json:"detached,omitempty"`
	// Changed is true when patchprof could not undo every change it made
	// in the target (its code, a scratch mapping, a signal setting); the
	// notes say which.
	Changed bool `json:"changed,omitempty"`
	// Running is true in an interim profile, written while the target still
	// ran (--interval, SIGUSR1); then there is no code, signal or detached.
	Running bool `json:"running,omitempty"`
	// Signal is the name of the signal that killed the target ("SIGSEGV").
	Signal string `json:"signal,omitempty"`
	// FaultAddress is the faulting address, only for SIGSEGV, SIGBUS,
	// SIGILL and SIGFPE; nil when unknown. A pointer, because 0 (a NULL
	// dereference) is the most common value and must still be saved.
	FaultAddress *Address `json:"fault_address,omitempty"`
	// PC is the program counter at the fatal signal: the link-time address
	// when it lies inside the executable, else the runtime address; nil
	// when unknown (a jump to NULL has PC 0).
	PC *Address `json:"pc,omitempty"`
	// PCOutside is true when PC lies outside the code patchprof read (the
	// executable and the counted libraries): in libc's raise, say, for a
	// SIGTERM or an abort. Function, File, Line and Module then name the
	// innermost frame of that code on the stack, the call that led out of
	// it, rather than PC's own place. Profiles written before this field
	// did the same without saying so.
	PCOutside bool `json:"pc_outside,omitempty"`
	// Function is the name of the function containing PC, if known; with
	// PCOutside, of the innermost frame in the program's code.
	Function string `json:"function,omitempty"`
	// File is the absolute source file of PC, if known.
	File string `json:"file,omitempty"`
	// Line is the source line of PC, if known.
	Line int `json:"line,omitempty"`
	// Module is the module Function, File and Line belong to, when that is
	// not the executable; PC is then a link-time address of that module.
	Module string `json:"module,omitempty"`
}

// A Line is the entry count of one source line.
type Line struct {
	// File is the absolute path of the source file.
	File string `json:"file"`
	// Line is the 1-based line number.
	Line int `json:"line"`
	// Count is how many times control entered the line (see
	// docs/design.md, "Line counts").
	Count uint64 `json:"count"`
	// UnexecutedBlock is true when a basic block on the line never ran
	// (known for lines derived from blocks): gcov's '*' after the count.
	UnexecutedBlock bool `json:"unexecuted_block,omitempty"`
	// Function is the name of the function whose code the line is in
	// (the first by address when several are), "" when unknown.
	Function string `json:"function,omitempty"`
	// Module is the path of the module the entry belongs to; "" is the
	// profile's executable.
	Module string `json:"module,omitempty"`
	// Samples and TimeNS are the CPU time sampled in it (--time): the
	// number of samples and the time they stand for, in nanoseconds.
	Samples uint64 `json:"samples,omitempty"`
	TimeNS  uint64 `json:"time_ns,omitempty"`
}

// A Function is the call count of one function.
type Function struct {
	// Name is the ELF symbol name (aliases at the same address are not
	// repeated).
	Name string `json:"name"`
	// Count is how many times the function's entry was executed.
	Count uint64 `json:"count"`
	// File is the absolute source file of the entry, if DWARF knows it.
	File string `json:"file,omitempty"`
	// Line is the source line of the entry, if DWARF knows it.
	Line int `json:"line,omitempty"`
	// Address is the link-time entry address.
	Address Address `json:"address"`
	// Module is the path of the module the entry belongs to; "" is the
	// profile's executable.
	Module string `json:"module,omitempty"`
	// Blocks is the number of basic blocks of the function when its
	// blocks were counted (--blocks, or --lines for a function whose flow
	// was recovered); 0 otherwise.
	Blocks int `json:"blocks,omitempty"`
	// BlocksExecuted is how many of them ran at least once.
	BlocksExecuted int `json:"blocks_executed,omitempty"`
	// Returns is how many times the function returned (left through its
	// return or a tail call), when its blocks were counted: less than
	// Count when calls ended in exit, longjmp or an exception.
	Returns uint64 `json:"returns,omitempty"`
	// Edges is the number of edges between its blocks (and out of it).
	Edges int `json:"edges,omitempty"`
	// Samples and TimeNS are the CPU time sampled in its own code (--time),
	// not in the functions it calls: pprof's flat time.
	Samples uint64 `json:"samples,omitempty"`
	TimeNS  uint64 `json:"time_ns,omitempty"`
}

// A Site is one planted breakpoint address and its raw trap count.
type Site struct {
	// Address is the link-time address.
	Address Address `json:"address"`
	// Count is the number of traps taken at Address.
	Count uint64 `json:"count"`
	// Kind is KindLine, KindFunc or KindLineFunc, or a list with
	// KindBlock (see KindBlock).
	Kind string `json:"kind"`
	// Module is the path of the module the entry belongs to; "" is the
	// profile's executable.
	Module string `json:"module,omitempty"`
}

// A Dropped is a line-table row that was not planted.
type Dropped struct {
	// Address is the row's link-time address.
	Address Address `json:"address"`
	// File is the row's absolute source file.
	File string `json:"file"`
	// Line is the row's line number.
	Line int `json:"line"`
	// Reason says why the row was not planted ("not an instruction start").
	Reason string `json:"reason"`
	// Module is the path of the module the entry belongs to; "" is the
	// profile's executable.
	Module string `json:"module,omitempty"`
}

// HasLines reports whether p counted source lines.
func (p *Profile) HasLines() bool {
	return p.Mode == ModeLines || p.Mode == ModeLinesFuncs
}

// HasFuncs reports whether p counted function calls.
func (p *Profile) HasFuncs() bool {
	return p.Mode == ModeFuncs || p.Mode == ModeLinesFuncs
}

// Sort puts p in its canonical order, module by module (the executable
// first): Lines by file then line, Functions, Sites and Dropped by address
// (then name, file or line); Sources by file; Modules by path; Instances
// by file, line and address. Save sorts before
// writing, so saved profiles are deterministic.
func (p *Profile) Sort() {
	slices.SortStableFunc(p.Modules, func(a, b Module) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(p.Lines, func(a, b Line) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	slices.SortStableFunc(p.Functions, func(a, b Function) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), cmp.Compare(a.Address, b.Address), strings.Compare(a.Name, b.Name))
	})
	slices.SortStableFunc(p.Sites, func(a, b Site) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), cmp.Compare(a.Address, b.Address))
	})
	slices.SortStableFunc(p.Dropped, func(a, b Dropped) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), cmp.Compare(a.Address, b.Address),
			strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	p.sortBlocks()
	p.sortArcs()
	p.sortSamples()
	p.sortStacks()
	p.sortInstances()
	p.sortSources()
}

// ModulePaths returns the profile's modules in report order: the executable
// (as "") first, then the others by path.
func (p *Profile) ModulePaths() []string {
	out := []string{""}
	for _, m := range p.Modules {
		out = append(out, m.Path)
	}
	slices.Sort(out[1:])
	return out
}

// ModuleName returns the file a module path stands for: Executable for "".
func (p *Profile) ModuleName(module string) string {
	if module == "" {
		return p.Executable
	}
	return module
}

// ShellStatus returns the status a shell would report for the target: the
// exit code, or 128+N when signal N killed it. It returns 1 (a generic
// failure) when the exit is unknown or names a signal SignalNumber does not
// know.
func (e Exit) ShellStatus() int {
	if e.Detached || e.Running {
		return 0
	}
	if e.Code != nil {
		return *e.Code
	}
	if n, ok := SignalNumber(e.Signal); ok {
		return ShellStatus(0, n)
	}
	return 1
}

// ShellStatus returns the status a shell reports for a process that
// exited with code, or that signal killed when signal is not 0: the code,
// or 128+signal. It is the one rule for every exit patchprof describes
// (Exit.ShellStatus, the monitor's exits, a signal patchprof passes on).
func ShellStatus(code, signal int) int {
	if signal != 0 {
		return 128 + signal
	}
	return code
}

// Killed reports whether a signal ended the target.
func (e Exit) Killed() bool {
	return e.Code == nil && e.Signal != ""
}

// EngineNotePrefix begins the notes that report how the in-process engine
// served the run (sites patched, kept as breakpoints and why, traps). They
// are saved with the profile; the listing shows them only when asked (-v).
const EngineNotePrefix = "in-process engine: "

// IsEngineNote reports whether note n is one of the engine's
// (EngineNotePrefix).
func IsEngineNote(n string) bool { return strings.HasPrefix(n, EngineNotePrefix) }

// CacheNotePrefix begins the notes that say what the analysis cache
// served or stored for the run (package anacache). Like the engine's, they
// are saved with the profile and the listing shows them only when asked
// (-v); a corrupt entry's note does not begin so, and is always shown.
const CacheNotePrefix = "analysis cache: "

// IsDetailNote reports whether note n is detail the listing shows only
// when asked: the engine's (EngineNotePrefix) or the analysis cache's
// (CacheNotePrefix).
func IsDetailNote(n string) bool {
	return IsEngineNote(n) || strings.HasPrefix(n, CacheNotePrefix)
}
