// Package unwind walks a sampled thread's call chain by the call frame
// information (CFI) its modules carry in .eh_frame, as perf record
// --call-graph dwarf and debuggers do: from the sampled registers and a
// copy of the stack, each frame's rules give its canonical frame address
// (CFA), where its caller's return address and frame pointer were saved,
// and so the caller's registers (a CFA given by a DWARF expression is
// evaluated where it is the linker's PLT form). It needs no frame pointers, so it follows
// C and C++ built at -O1 and above as well as code that keeps them.
//
// It knows nothing of processes or layouts: the caller maps each runtime
// address to a module's Table and link-time address (Walk's find), and
// gives the stack as bytes.
//
// Files:
//
//	doc.go: this map
//	unwind.go: Table, Regs, Stack, Walk (pure)
//	load.go: Load, reading a module's .eh_frame and its segments
package unwind
