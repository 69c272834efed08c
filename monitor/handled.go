package monitor

// A HandledFault is a fault of the program's own instruction (a
// synchronous SIGSEGV, SIGBUS, SIGFPE or SIGILL) delivered to a handler of
// the program rather than killing it. Unless the handler returns to retry
// the instruction, the activation that faulted never runs the rest of its
// block: Go's handler makes the goroutine call sigpanic from the faulting
// instruction, and the panic, recovered or not, never comes back to it;
// a C handler may siglongjmp away. The in-process engine's derived counts
// need to know (breakpoint.Table.DeriveFlow).
type HandledFault struct {
	Image *Image
	Addr  uint64 // link-time address of the faulting instruction in Image
	// Left: the handler never returned (rt_sigreturn) to the context the
	// fault interrupted, and its thread ended or replaced its program:
	// it left by siglongjmp, or ended the thread from inside. A handler
	// that returns resumes the activation (at the instruction, to retry
	// it, or past it): the activation did not stop there.
	Left bool
}

// A ThreadEnd is where a thread was in a profiled image when it ended:
// killed while it ran the program's code (another thread's exit_group or
// execve, a fatal signal sent to the process) or ending through its own
// system call; or where a signal whose handler it never returned from
// interrupted it (an asynchronous cancel, a siglongjmp out of a handler). The activation there never runs the rest of its block, so
// the in-process engine's derived counts take it out of that block's flow
// (breakpoint.Table.DeriveFlow).
type ThreadEnd struct {
	Image *Image
	Addr  uint64 // link-time address of the instruction the thread was at
	// Entered: the thread had been counted at Addr, a site it had begun
	// (in a trampoline past its counter update, or in an out-of-line
	// slot). A thread at a block's first instruction otherwise had not
	// entered that block.
	Entered bool
}
