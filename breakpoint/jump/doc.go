// Package jump owns the trades of the in-process engine (--engine jump, the
// default), which counts a site's hits in the target instead of trapping:
// a 5-byte jmp rel32 over the site's first instructions goes to a
// trampoline that adds one to the thread's counter and runs the displaced
// instructions. Four trades make that work, and they are here:
//
//   - jump sites: where a jmp fits over a site's code (whole instructions,
//     no branch target inside the bytes it covers, only the last one a
//     control transfer) and whether the arithmetic flags are dead there,
//     since the plain counter update writes them (Plan, PlanRun,
//     FlagsDead);
//   - trampolines: the counter update (one that keeps the flags where
//     they are live), the displaced code relocated for its new address
//     (package breakpoint/relocate), the exits back to original code, and
//     where a thread found inside one stands in the original
//     (BuildTrampoline, Trampoline.Where, Trampoline.Rewind);
//   - arc counters: a trampoline whose block ends in a conditional jump or
//     a jump table's dispatch counts arcs of it too (EdgeCount), for the
//     functions whose edges do not all follow from their block counts;
//   - flow derivation: the edge counts, and the counts of blocks never
//     planted, follow from the block counts by flow conservation, planned
//     once per function and replayed on a run's counts (PlanDerive, Flow,
//     DerivePlan.Derive).
//
// They are a package of their own because they are a trade apart from the
// site table: each is a function of plain data (code bytes, addresses, a
// *cfg.Graph, slices of counts), so each is tested without a table, a plan
// or a process, and it builds on any OS. It depends on nothing in package
// breakpoint, which imports it: the plan over the table (which sites take a
// jump, which blocks are derived, which arcs are counted: Plan.PlanJumps,
// Table.DeriveFlow) is breakpoint's, and writing the trampolines into the
// target, the per-thread counter slabs and the GS bases are the monitor's.
//
// Files:
//
//	site.go       Site, Plan, PlanRun: where a jmp rel32 fits; FlagsDead,
//	              the reading of the arithmetic flags
//	trampoline.go Trampoline, BuildTrampoline: the counter update, the
//	              displaced code, exits, short sites' landings; mapping a
//	              PC in it to the original (Where, Equivalent)
//	keepflags.go  the counter update that keeps the flags, and how a
//	              thread inside it is put back at its site (Rewind)
//	gate.go       gates: trampolines that stop their thread with SIGSTOP
//	              instead of counting (PlanGate, GateStop, GateFinish)
//	edgecount.go  EdgeCount: a trampoline counting arcs of its jump
//	calls.go      Pend, EntryCheck: which function an indirect call
//	              entered, met in the thread's slab
//	pushed.go     Prologue: how far a trampoline's start has moved the
//	              stack pointer at each offset, for a sampled chain's walk
//	entrycount.go EntryCount: a dispatch's trampoline counting the jump-table
//	              entry it takes
//	wholeblock.go WholeBlock, BlockAt, PlainJcc: blocks displaced whole,
//	              MaxHostLen
//	derive.go     flow conservation: Flow, PlanDerive, DerivePlan.Derive,
//	              Stop; LoopDepth, the guess at which blocks run most
//	grow.go       Growth: whether one more derived block keeps a flow
//	              solvable, by union-find
//	moved.go      Template, MovedTo: a trampoline moved to another
//	              process of its program, its absolute words shifted
package jump
