// Package cfg builds the control-flow graph of one function from its
// machine code: basic blocks, the edges between them, the call sites in
// them, and the jump tables of compiled switch statements.
//
// cfg owns the answer to "where does a basic block start, and which way can
// control leave it". Build takes a function's code bytes and link-time
// address (the caller gets them from symtab) and returns a *Graph, or a
// *Error saying why the flow of that function cannot be recovered: bytes
// that do not decode, a branch into the middle of an instruction, a
// function that ends mid-instruction or lets control fall off its end, an
// indirect jump whose table cannot be found, or bytes no control flow
// reaches that are neither padding nor code (data in the text, as Larus and
// Ball describe in "Rewriting Executable Files to Measure Program
// Behavior", 1994, section 3.4). It never guesses: a function it cannot
// recover is reported as such, and the caller plants nothing in it.
//
// The graph is built the way qpt builds it: decode from the entry following
// control flow (recursive descent, so data and padding between blocks are
// never mistaken for code), mark leaders (the entry, every direct branch
// target, every jump-table target, the instruction after a branch or a
// return, the instruction after a call to a function that does not
// return), then cut the decoded instructions into blocks and record their
// edges. Calls are kept apart as Call sites and do not end a block, unless
// Options.SplitCalls asks for it, as GCC's profiling graph does (gcov-style
// line counts need the return as an edge of its own).
//
// Jump tables are read through an Image, the bytes of the whole executable
// by link-time address (ELFImage is one over debug/elf), because gcc and Go
// put them in .rodata, outside the function's code. A computed goto (GNU
// C's goto *p) has no table: its targets are every address of the
// function that its code or the executable's data holds as a value (a
// PointerImage lists the data's), as GCC's are every label whose address
// is taken; it is read as one only when its value provably is such an
// address (computedgoto.go).
//
// C++ exception landing pads (catch blocks, cleanups) are code only the
// unwinder enters. ELFLandingPads reads them from .eh_frame and the LSDAs
// in .gcc_except_table (LSB "Exception Frames", Itanium C++ ABI exception
// handling); Options.LandingPads makes each the start of a Landing block,
// as Build does by itself for Go's deferreturn landing pads.
//
// cfg does not own the symbol table or function bounds (package symtab),
// source lines (package lineinfo), planting breakpoints at block starts
// (package breakpoint) or counting them in a running process (package
// monitor). CheckFlow is the one place that looks at counts: it checks that
// block and edge counts of one function agree with each other.
//
// cfg is pure Go, builds on every OS and never panics on bad input.
//
// Files:
//
//	graph.go: Graph, Block, Edge, EdgeKind, Term, Call and Table: the result
//	build.go: Image, CodeImage, Options and Build: decoding from the entry
//	    along control flow, and the leaders
//	build_graph.go: cutting the decoded instructions into blocks and edges
//	build_gaps.go: the bytes decoding does not reach: padding, dead code
//	    after a call that does not return, landing pads
//	decode.go: one instruction's decode and the length of padding
//	noreturn.go: DefaultNoReturn, the functions known never to return
//	errors.go: Error, its reasons (ErrJumpTable, ...) and Reason
//	flow.go: FlowError and CheckFlow, flow conservation of counts
//
//	jumptable.go: finding and recovering jump tables: the recognised
//	    forms, the search, the table's entries
//	jumptable_machine.go: the symbolic machine that evaluates a block
//	jumptable_step.go: the machine's step, one instruction at a time
//	jumptable_preds.go: what a block's predecessors say: the bound check
//	    of a table's index
//	calleeregs.go: CalleeRegs and RegSet, the registers a direct call may
//	    change, read from its callee's code (gcc -O2's -fipa-ra)
//	jumptable_consts.go: the constants registers hold on entry to each
//	    block, by constant propagation over the graph
//	jumptable_slot.go: an index compared in memory: which instructions
//	    between the compare and the jump leave it as it was
//	computedgoto.go: GNU C computed gotos (goto *p): the function's
//	    taken addresses as the targets, and when a jump provably is one
//
//	elf.go: ELFImage, an executable's loadable segments with
//	    R_X86_64_RELATIVE applied, the code addresses its data holds, and
//	    its PLT stub names
//	resolve.go: CalleeNames, call targets named from symtab and the PLT
//	lsda.go: ELFLandingPads and ParseLandingPads, C++ landing pads from
//	    .eh_frame and .gcc_except_table, and EHError
package cfg
