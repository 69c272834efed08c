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
// Engines. The out-of-line engine (xol_linux_amd64.go, the default) leaves the
// int3 in place: at a module's first hit in a process it maps a scratch region
// near the module by running mmap in the trapped thread, fills each site's slot
// with its relocated instruction (breakpoint.Relocate) at the site's first hit,
// and serves a hit by counting and moving the thread's PC to the slot: one stop,
// and the other threads run on. Signals delivered while a thread is in a slot
// first move it back to the original PC; detach moves every thread out and
// unmaps the regions.
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
// PTRACE_O_EXITKILL makes the kernel kill the target if patchprof dies, so no
// process lives on with planted int3s.
//
// Files, by concern (all but monitor.go and unsupported.go are Linux x86-64):
//
//	monitor.go     Options, Result, Image, the errors: the API on every platform
//	unsupported.go the same API elsewhere, returning *UnsupportedError
//	launch         starting the target: fork, exec, hand-over to PTRACE_SEIZE
//	attach, detach seizing a running process; restoring it and letting it go
//	loop           Run, the event loop, dispatch (the one place that acts on a
//	               wait status), the trap of a site
//	wait           decodeStatus: wait statuses as stops (pure)
//	tasks          threads, address spaces, new tasks, exec, --no-follow
//	maps           /proc/PID/maps, modules, planting
//	signals        job control, signal delivery, crash records
//	classic        Bishop's cycle: all-stop, single-step, rep, re-arm
//	xol            the out-of-line engine: scratch regions, slots, injected calls
//	textchange     code the program moves, unmaps, drops or makes writable
//	               (mremap, munmap, madvise, mprotect): its own bytes first
//	guard          what a program's seccomp sandbox and own GS base allow
//	               patchprof to do in it (no injected call; no GS counters)
//	term           the target's writes to patchprof's terminal (Options.Terminal)
//	isample, tick  interrupt sampling (Options.Interrupt), the ptrace fallback
//	               of --time; the signal that ends wait4 for its rounds
//	ptrace_unsafe, mem, proc, pin   raw requests, /proc/PID/mem, /proc reads, CPU pinning
//
// Errors. A ptrace request that fails with ESRCH (gone) means the thread died
// meanwhile: its death comes next from wait4 and is not an error. Any other
// failure that leaves the counts incomplete without ending the run (a site not
// re-armed, a child not followed, code not restored) is recorded and returned
// in Result.Degraded.
package monitor
