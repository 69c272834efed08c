package monitor

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/jump"
)

// Options says what to run and where to count.
type Options struct {
	Path string   // executable to run (resolved path)
	Args []string // argv, argv[0] included
	Env  []string // environment, nil = patchprof's
	Dir  string   // working directory, "" = patchprof's

	Stdin, Stdout, Stderr *os.File // nil = patchprof's own

	Table *breakpoint.Table // sites to plant (link-time addresses)
	Entry uint64            // the executable's link-time e_entry, to find the load bias
	// MaySetGS says that the executable may set its GS base with a system
	// call (Image.MaySetGS).
	MaySetGS bool
	// Go describes the executable's Go runtime (Image.Go), nil if it has
	// none.
	Go *GoRuntime

	// Attach, if not 0, is the PID of a running process to profile instead
	// of starting Path. Every thread is seized; at the end every original
	// byte is restored and every thread detached, leaving it running.
	Attach int
	// Stop, when closed, ends profiling: in attach mode the monitor restores
	// the code and detaches. A program that sets it must call ExitIfWaker
	// first thing in main (see wake).
	Stop <-chan struct{}

	// NoFollow profiles only the first process: forked children get their
	// original code back and run untraced. (A vfork child shares the
	// parent's memory, so it stays traced until it execs or exits.)
	NoFollow bool

	// SnapshotReq asks, with each value received, for Snapshot to be called
	// on the tracer thread while the target runs (--interval, SIGUSR1).
	// Like Stop, it needs ExitIfWaker.
	SnapshotReq <-chan struct{}
	// Snapshot receives the load bias and a copy of the counts of the
	// moment; nil disables snapshots.
	Snapshot func(bias uint64, c Counts)

	// OnStart, if set, is called with the target's PID once it runs.
	OnStart func(pid int)
	// Hits, if set, is incremented at every trap at a site, for a display
	// of progress from another goroutine (a hit undone later, a signal
	// that came before the instruction, is not taken back).
	Hits *atomic.Uint64
	// Terminal, if set, is told when the target writes to or reads from
	// patchprof's terminal, so that a progress line drawn there never
	// mixes with what the target prints.
	Terminal *Terminal

	// Images, if set, is asked about every other ELF file that a traced
	// process maps executable: its shared libraries (those loaded at start
	// and by dlopen, seen at the dynamic linker's notification point) and
	// the programs traced processes exec. It returns what to plant there, or
	// nil to leave the file alone; exe is true when the file is the
	// process's program rather than a library. It is called once per path,
	// on the tracer thread, and the answer is kept: an image is shared by
	// every process that maps it, and its counts are summed over them.
	Images func(path string, exe bool) *Image

	// Layout, if set, is called on the tracer thread each time the code
	// the monitor knows in a traced process changes (images planted or
	// forgotten, a fork's copy, an exec, a scratch region mapped), while
	// no thread of that process runs. A CPU-time sampler resolves its
	// samples with it (see Layout).
	Layout func(Layout)

	// Interrupt, if set, samples the PCs of the running threads by
	// interrupting them (the fallback of CPU time sampling where perf
	// events are refused; see InterruptSampling).
	Interrupt *InterruptSampling

	// Engine is EngineXOL (the default, ""), EngineClassic or EngineJump.
	Engine string

	// Pin runs the tracer thread and a started target on one CPU (see
	// pinTogether): every stop is then a same-CPU hand-over. Ignored with
	// Attach: an operator's daemon keeps its CPU mask.
	Pin bool
}

// A Terminal is the terminal patchprof draws on (its stderr), which the
// target may share. The monitor watches the target's system calls (the
// threads run under PTRACE_SYSCALL) and calls Enter at the entry of every
// call that writes to or reads from that terminal, before the call runs, and
// Leave at its exit: what patchprof drew is off the screen before the
// target's bytes reach it, and the target's bytes are never changed. Both are
// called on the tracer thread, which waits for them: they must be quick.
type Terminal struct {
	// File is the terminal (a descriptor of patchprof's open on it).
	File *os.File
	// Enter is called at the entry of a write or read of the target on the
	// terminal, and must return only once nothing of patchprof's is left
	// on the terminal's current line. lineDone is false when the bytes a
	// write is about to print do not end with a newline (a prompt): the
	// target's line is unfinished on the screen. It is true for a read,
	// and for a write whose bytes the monitor cannot see (sendfile).
	Enter func(lineDone bool)
	// Leave is called at the exit of that call, or when its thread ends
	// inside it.
	Leave func()
}

// The engines.
const (
	// EngineXOL executes each site's displaced instruction out of line, in
	// a scratch region of the target: one stop per hit, no thread held.
	EngineXOL = "xol"
	// EngineClassic is Bishop's cycle: restore the byte, single-step with
	// the other threads held, re-arm.
	EngineClassic = "classic"
	// EngineJump counts in the target: the sites the plan marked
	// (breakpoint.Plan.PlanJumps) take a jmp to a trampoline that updates a
	// per-thread counter; the others are served as by EngineXOL.
	EngineJump = "jump"
)

// An Image is one ELF file to profile wherever it is mapped: its sites, and
// how to find its load bias from a mapping of it.
type Image struct {
	Path  string            // absolute path, as /proc/PID/maps shows it
	Table *breakpoint.Table // sites at link-time addresses; may hold Notify sites
	// LinkAddr returns the link-time address of a file offset inside an
	// executable segment (symtab.File.LinkAddr).
	LinkAddr func(off uint64) (uint64, bool)
	// RDebug is the link-time address of the dynamic linker's struct
	// r_debug (glibc's _r_debug) in an image with Notify sites, 0 if
	// unknown. At a notification with r_state RT_ADD, the thread goes on
	// to map objects, the dynamic linker's own work, and runs without
	// system-call stops to the next one.
	RDebug uint64
	// NotifyRoom is how many bytes from the Notify site to the next
	// function: what a gate's patch may cover (gate_linux_amd64.go).
	NotifyRoom uint64
	// MaySetGS says that the module may set its thread's GS base with a
	// system call (arch_prctl): a process that maps it keeps the
	// system-call stops, which see that call (eager_linux_amd64.go).
	MaySetGS bool
	// Go describes the module's Go runtime, nil if it has none: with it a
	// process holding a Resume site may still run without system-call
	// stops (goquiet_linux_amd64.go).
	Go *GoRuntime

	id int // index of the image in the monitor, for per-thread cursors
	// hot are the first sites of the functions a process of the image
	// ran, in the order first hit, hotSeen their set: patched ahead at
	// a later process's first hit (hot_linux_amd64.go).
	hot     []int
	hotSeen map[int]bool
	// tmpl are, per site, its trampoline as an earlier process built it,
	// moved into later ones (moved_linux_amd64.go); planted counts the
	// processes that planted the image (fork children aside).
	tmpl    []*jumpTemplate
	planted int
}

// A jumpTemplate is a site's trampoline as built in one process of its
// image, with what it was built from.
type jumpTemplate struct {
	tr      *jump.Trampoline // Template: exits not aimed, no landing
	src     []byte           // the original bytes it relocated (Source)
	counter uint32
	edges   []jump.EdgeCount
}

// A Mapped is one image mapped in a process, with its load bias and the
// runtime range of its code.
type Mapped struct {
	Image  *Image
	Bias   uint64
	Lo, Hi uint64
}

// Counts are what a run counted, by table (Options.Table and each
// Image's): copies taken while the tables were at rest, which their
// reader owns. Only the monitor writes the tables' own counts.
type Counts map[*breakpoint.Table]*breakpoint.Counts

// Result is what a run produced.
type Result struct {
	// Counts are the run's counts at its end.
	Counts Counts

	// Handled are the faults delivered to the program's own handlers, in
	// order (handled_linux_amd64.go).
	Handled []HandledFault
	// ThreadEnds are where threads were in profiled code when they ended
	// (handled_linux_amd64.go, threadExit).
	ThreadEnds []ThreadEnd

	Exit      Exit
	Bias      uint64 // load bias of the executable
	Threads   int    // threads seen, the first included
	Processes int    // processes (address spaces) seen
	// ClassicSites counts the sites the out-of-line engine could not
	// relocate and served with the classic cycle.
	ClassicSites int
	// JumpSites counts the sites the in-process engine patched (each
	// process counted apart); JumpRefused, the sites it planned but left to
	// the out-of-line engine at run time, by reason.
	JumpSites   int
	JumpRefused map[string]int
	// JumpAhead counts the functions patched at a process's first hit in
	// their image, ahead of their own, because an earlier process of the
	// image ran them.
	JumpAhead int
	// JumpMoved counts the trampolines moved from an earlier process of
	// their image instead of built (moved_linux_amd64.go).
	JumpMoved int
	// Traps counts the stops at a site's breakpoint: every hit under the
	// trap engines; under the in-process one, the first hits that patch a
	// site and the hits of the sites that keep a breakpoint.
	Traps int
	// SyscallStops counts the stops at system calls: syscall-entry and
	// syscall-exit stops, and the seccomp filter's stops before a call.
	SyscallStops int
	// AttachPause is how long an attached process was stopped for the
	// attach: from the first thread seized to the last resumed, the
	// sites read, planted and patched in between (-p only).
	AttachPause time.Duration
	// Holds counts the times running threads were stopped because a site's
	// original byte had to be put back (the classic cycle, with threads).
	Holds int
	// Changed is true when a failure left a change of patchprof's in the
	// target (code not restored, a scratch region still mapped, a signal
	// setting not put back): Degraded says which.
	Changed bool
	// SignalRepairs counts the breakpoints that hit with SIGTRAP blocked or
	// ignored, after which the program's signal state was put back.
	SignalRepairs int
	// Notes say, once each, why a process was served otherwise than the
	// engine asked (a seccomp filter, a program that uses its GS base),
	// with counts still exact.
	Notes []string
	// Degraded, if not nil, joins the failures that left the counts
	// incomplete without ending the run: a site that could not be re-armed,
	// a process that could not be followed, code that could not be restored.
	// A thread killed in the middle of a request is not one.
	Degraded error
}

// Exit is how the target ended.
type Exit struct {
	Detached bool   // profiling ended with the target still running (attach mode)
	Code     int    // exit code when Signal is 0
	Signal   int    // the signal that killed it, 0 if it exited
	Fault    *Fault // where that signal was delivered, when the monitor saw it
}

// A Fault records the last signal delivered to a process, with the state of the
// thread it was delivered to, so a crash can be reported with its place.
type Fault struct {
	Signal int
	Code   int32  // si_code
	Addr   uint64 // si_addr (the faulting address for SIGSEGV, SIGBUS, SIGILL, SIGFPE)
	PC     uint64 // runtime PC of the thread
	SP     uint64
	// Entered: the thread had begun the instruction at PC (a fault of
	// that instruction), or had been counted there (ThreadEnd.Entered).
	// A thread a signal stopped at a block's first instruction otherwise
	// had not begun that block.
	Entered bool
	Stack   []byte // up to 16 KiB of the stack from SP, to find callers
	// Maps are the profiled images mapped in the process at the fault, to
	// tell which one PC and the return addresses on Stack belong to.
	Maps []Mapped
}

// ErrPtraceNotPermitted is returned when the kernel refuses to let patchprof
// trace the target.
var ErrPtraceNotPermitted = errors.New("ptrace not permitted")

// A StartError reports a program that did not start: execve(2) failed (Err
// is its error, an errno), or the process ended before running a single
// instruction of the program (Exit says how). The kernel kills with SIGSEGV
// a process whose executable it cannot map once execve is past its point of
// no return (bad program headers): natively that is status 139.
type StartError struct {
	Path string
	Err  error // execve's error; nil when the process ended instead
	Exit *Exit // how the process ended; nil when execve failed
}

// Error implements error.
func (e *StartError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("cannot start %s: %v", e.Path, e.Err)
	}
	how := fmt.Sprintf("exited with code %d", e.Exit.Code)
	if e.Exit.Signal != 0 {
		how = fmt.Sprintf("was killed by signal %d", e.Exit.Signal)
	}
	return fmt.Sprintf("%s failed to start: it %s before its first instruction (the kernel could not load it)", e.Path, how)
}

// Unwrap returns execve's error.
func (e *StartError) Unwrap() error { return e.Err }

// An ExecedError reports a process that exec'd another program while
// patchprof attached to it: what was analysed (Planned, read from
// /proc/PID/exe before the attach) is not what it runs once stopped
// (Now). Nothing was planted; the process was let go.
type ExecedError struct {
	PID          int
	Planned, Now string
}

// Error implements error.
func (e *ExecedError) Error() string {
	return fmt.Sprintf("process %d exec'd %s while patchprof attached (it ran %s): attach again", e.PID, e.Now, e.Planned)
}

// ErrNoProcess, ErrZombie, ErrAlreadyTraced and ErrOwnProcess describe
// processes that cannot be attached to (CheckAttach).
var (
	ErrNoProcess     = errors.New("no such process")
	ErrZombie        = errors.New("process is a zombie")
	ErrAlreadyTraced = errors.New("process is already traced")
	ErrOwnProcess    = errors.New("cannot attach to patchprof itself or its ancestors")
)

// wakerEnv marks a process started only to end the tracer's blocking wait4
// (see wake).
const wakerEnv = "PATCHPROF_WAKER=1"

// ExitIfWaker exits at once when this process is a waker, a copy of the
// program started only to wake the tracer thread. Programs that set
// Options.Stop or Options.SnapshotReq call it first thing in main. It does
// nothing in any other process, and on every platform.
func ExitIfWaker() {
	for _, e := range os.Environ() {
		if e == wakerEnv {
			os.Exit(0)
		}
	}
}
