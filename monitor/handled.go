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
}
