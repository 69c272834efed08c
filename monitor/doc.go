// Package monitor runs the target under ptrace and counts the traps: it is
// Bishop's execution monitor, and the only package that knows it is on Linux.
// It follows every thread, fork and exec, and plants in every module a process
// maps (the executable, shared libraries as ld.so loads and unloads them,
// exec'd programs) as Options.Images says.
//
// Thread model: every ptrace request must come from the tracer thread, so Run
// locks one goroutine to its OS thread, starts the target from it, and does all
// ptrace calls, waits and /proc/PID/mem accesses there. Functions that must run
// on that thread say so in a "Preconditions:" line.
//
// Engines. The in-process engine (Options.Engine = EngineJump, the default;
// jump_linux_amd64.go) counts in the target: at a function's first hit it
// writes a trampoline (built by package breakpoint/jump) for each of its sites
// that the plan marked (breakpoint.Table.JumpLen) and replaces the site's
// first bytes with a jmp there; each thread adds to its own counter slab,
// addressed through its GS base, in a memfd patchprof maps too
// (counters_linux_amd64.go), so later hits cost no stop. Sites it cannot patch
// keep their int3, served by the out-of-line engine. A thread that comes back
// into the middle of a patched site (a goroutine preempted there, a signal
// handler's return) runs on from the trampoline's copy of its instruction
// (filler_linux_amd64.go).
//
// The out-of-line engine (EngineXOL; xol_linux_amd64.go) leaves the int3 in
// place: at a module's first hit in a process it maps a scratch region near
// the module by running mmap in the trapped thread, fills each site's slot
// with its relocated instruction (relocate.Relocate, package
// breakpoint/relocate) at the site's first hit, and serves a hit by
// counting and moving the thread's PC to the slot: one stop, and the other
// threads run on. Signals delivered while a thread
// is in a slot first move it back to the original PC; detach moves every
// thread out and unmaps the regions.
//
// The classic cycle (Options.Engine = EngineClassic, and any site the
// out-of-line engine cannot relocate): a trap at a site is counted, the thread's PC moved
// back onto the site, the original byte put back, the thread single-stepped and
// the int3 written again. While the byte is out, no other thread of the same
// address space may run past the site, so the monitor first stops them all with
// PTRACE_INTERRUPT ("all-stop" for the duration of one step; a single-threaded
// target pays nothing for it). Events that arrive from other threads meanwhile
// are queued and handled, in order, after the int3 is back: a thread that trapped
// at the very site being stepped is counted then, once.
//
// The target is started with PTRACE_TRACEME (so it stops at its exec before any
// of its code ran) and then handed over to PTRACE_SEIZE (detach with SIGSTOP,
// seize, resume), because only a seized tracee supports PTRACE_INTERRUPT and
// PTRACE_LISTEN, which the all-stop and transparent job control need.
// A launched target has PTRACE_O_EXITKILL: the kernel kills it if patchprof
// dies, so no process lives on with planted int3s. An attached one has not
// (attach_linux_amd64.go): an operator's daemon must not die because
// patchprof did.
//
// Files, by concern (all but monitor.go, unsupported.go, handled.go,
// isample.go and layout.go are Linux x86-64):
//
// The API and the loop:
//
//	monitor.go: Options, Result, Image, Fault, the errors: the API on every platform
//	unsupported.go: the same API elsewhere, returning *UnsupportedError
//	loop_linux_amd64.go: Run, the event loop, dispatch (the one place that acts on a wait status), the trap of a site
//	wait_linux.go: decodeStatus, wait statuses as stops (pure)
//	events_linux_amd64.go: the next event: deferred ones first, then waitpid's
//	debug_linux_amd64.go: the event ring PATCHPROF_DEBUG=1 prints, for developers
//
// Processes, threads and modules:
//
//	launch_linux_amd64.go: starting the target (fork, exec, hand-over to PTRACE_SEIZE) and the trace options
//	attach_linux_amd64.go: seizing a running process (-p)
//	detach_linux_amd64.go: putting back every byte, register and mapping, and letting the process go
//	tasks_linux_amd64.go: threads, address spaces, new tasks, exec, --no-follow
//	maps_linux_amd64.go: /proc/PID/maps, modules, planting
//	loader_linux_amd64.go: the dynamic linker's notifications, and its mapping window run without system-call stops
//	textchange_linux_amd64.go: code the program moves, unmaps, drops or makes writable (mremap, munmap, madvise, mprotect): its own bytes first
//	layout.go, layout_linux_amd64.go: the code layout of each address space, reported to Options.Layout for the samplers
//
// Signals:
//
//	signals_linux_amd64.go: job control, signal delivery, crash records
//	sigstate_linux_amd64.go: the target's SIGTRAP disposition and mask, kept as the program set them
//	handled.go, handled_linux_amd64.go: faults delivered to the program's own handlers, and where each thread ended (Result.Handled, Result.ThreadEnds)
//	unkick_linux_amd64.go: restarting the system calls our stops would end with EINTR
//	term_linux_amd64.go: the target's writes to patchprof's terminal (Options.Terminal)
//
// Engines:
//
//	classic_linux_amd64.go: Bishop's cycle: all-stop, single-step, rep, re-arm
//	entries_linux_amd64.go: countEntry, a dispatch's table index read at its trap
//	xol_linux_amd64.go: the out-of-line engine: scratch regions, slots filled by breakpoint/relocate
//	syscall_linux_amd64.go: system calls injected into the target (syscallIn, stepSyscall)
//	sysfilter_linux_amd64.go: the seccomp filter that stops a launched target only at the system calls the monitor follows
//	jump_linux_amd64.go: the in-process engine: trampolines, patching a function at its first hit, exits, unpatching
//	slots_linux_amd64.go: the trampolines' region, packed in 32-byte slots that each know their site
//	jumpsignals_linux_amd64.go: signals and trampolines: out of one before a handler, back after sigreturn
//	eager_linux_amd64.go: an attach that patches every site at once, and runs the process without system-call stops
//	hot_linux_amd64.go: the functions earlier processes of an image ran, patched at a later process's first hit
//	lazy_linux_amd64.go: a function planned at its first hit, its derived sites' bytes put back in each process
//	moved_linux_amd64.go: each site's trampoline built once a program, moved into its later processes
//	prebuild_linux_amd64.go: the trampolines of an eager attach built ahead, before the stop and on every CPU, and laid out
//	gate_linux_amd64.go: gates: the dynamic linker's notification point served by a SIGSTOP, not an int3
//	goruntime.go, goquiet_linux_amd64.go: a Go program attached without system-call stops: its asyncPreempt return's gate, the exact test of a thread inside a handler
//	filler_linux_amd64.go: threads that come back into a patched site (Go's asyncPreempt return, a patch's filler)
//	counters_linux_amd64.go, counters_unsafe_linux_amd64.go: the per-thread counter slabs in a memfd, and their GS bases
//	calls_linux_amd64.go: indirect calls under the in-process engine: their callees' slots folded, both ends played at a trap, a preempted goroutine stepped through its call
//	live_linux_amd64.go: the counts read while the target runs (snapshots, --listen)
//	guard_linux_amd64.go: what a program's seccomp sandbox and own GS base allow patchprof to do in it (no injected call; no GS counters)
//
// Sampling:
//
//	isample.go, isample_linux_amd64.go: interrupt sampling (Options.Interrupt), the ptrace fallback of --time
//	tick_unsafe_linux_amd64.go: the signal that ends wait4 for a sampling round
//
// Raw access:
//
//	ptrace_unsafe_linux_amd64.go: raw ptrace requests x/sys/unix lacks
//	mem_linux.go: /proc/PID/mem as a breakpoint.Memory (and a relocate.Memory, for the slots)
//	stage_linux.go: /proc/PID/mem writes held and made page by page while every thread is stopped, a module's code and region read whole
//	proc_linux.go: /proc/PID/status fields and signal masks
//	pin_linux.go, getcpu_unsafe_linux.go: pinning the tracer and the target to one CPU
//
// Errors. A ptrace request that fails with ESRCH (gone) means the thread died
// meanwhile: its death comes next from wait4 and is not an error. Any other
// failure that leaves the counts incomplete without ending the run (a site not
// re-armed, a child not followed, code not restored) is recorded and returned
// in Result.Degraded.
package monitor
