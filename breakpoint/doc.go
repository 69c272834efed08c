// Package breakpoint owns the site table and everything planned over it:
// which addresses of one executable image are counted, how, and what the
// counts of a run mean.
//
// A site is an address where patchprof counts: a line-table row, a function
// entry, a basic block's start, or an internal site the monitor needs (the
// dynamic linker's notification point, the return of Go's
// runtime.asyncPreempt). The Table keeps, per site, the original byte its
// int3 replaced and the raw trap counts, in parallel slices (structure of
// arrays), so that a binary with a million sites costs tens of megabytes,
// not hundreds. NewPlan chooses the sites from the symbol table (symtab),
// the line table (lineinfo) and the flow graphs cfg recovers, refusing any
// address that is not the start of an instruction. Planting and restoring
// go through the small Memory interface, one read and one write per
// touched page; the package does not know about ptrace: the monitor hands
// it a Memory backed by /proc/PID/mem, and the tests a fake. A Cursor is
// one thread's open activations, from which a trap is counted as an entry
// to its line (gcov's definition) and as an edge between blocks.
//
// Lines are counted as gcov counts them: a function whose flow graph cfg
// recovers has no line sites; its blocks are counted, and each line's count
// is derived after the run from block and arc counts, through gcc's line
// model (package linemodel, beneath this one: the blocks GCC's graph has
// and the machine code does not, such as case and goto labels, loop
// latches, clobbers, empty cases). The plan builds the model over its flow
// graphs and hands it a run's Counts as plain slices (planlines.go). A
// function whose flow cannot be recovered, and every function under
// PlanOptions.RowSites, is counted at its rows instead, with the cursor's
// rule.
//
// x86 relocation is not here: package breakpoint/relocate turns one x86-64
// instruction into code that runs out of line, at another address, with the
// same effect (pure, bytes in and bytes out, and depending on nothing here).
// The xol engine runs a site's instruction from such a slot.
//
// Nor are the in-process engine's trades: package breakpoint/jump decides
// where a jmp rel32 fits over a site's code, builds the trampolines (with
// relocate) and their arc counters, and solves a function's flow equations,
// all over plain data (code bytes, addresses, a cfg.Graph), depending on
// nothing here. What stays here is the plan over the table (PlanJumps),
// which calls it site by site and graph by graph: which sites take a 5-byte
// jmp to a trampoline that counts the hit in the target and runs the
// displaced instructions (whole blocks where they fit), which keep their
// int3 and why, which arcs of a conditional jump or a jump table a
// trampoline counts, and which blocks are never planted because their
// counts, and every edge count, follow from the others' by flow
// conservation (DeriveFlow, after the run). Writing the trampolines into the
// target, the per-thread counters and the scratch regions are the monitor's.
//
// Files:
//
// The site table:
//
//	table.go        Table, SiteSpec, Kind, Memory: the sites in parallel
//	                slices, their counts, lookup by address, views at
//	                another load bias (At)
//	plant.go        Plant, Restore, RestoreIn, Unplant page by page;
//	                ArmIn and DisarmIn of one site in one address space
//	cursor.go       Cursor, Hit, Unhit: per-activation state, line entries
//	indirect.go     SetIndirectCalls, IndirectArc: the callee an indirect
//	                call entered, seen at its entry under the trap engines
//	callplan.go     the in-process engine's plan of indirect calls: the
//	                blocks that record one (never derived), the entries
//	                that count it, their slots (Plan.IndirectCalls)
//	entries.go      CountEntries, EntryReg, HitEntry: the jump-table entry
//	                of a dispatch, read at its trap under the trap engines
//	blocks.go       FuncGraph, SetBlocks: the flow graphs in table-wide
//	                numbering, block and edge counting on a hit
//	plan.go         PlanOptions, Plan, NewPlan: choosing the sites (function
//	                entries, rows, rep sites)
//	goprologue.go   Go's stack-check prologue, which an entry site is
//	                moved past
//	planblocks.go   block sites: flow graphs built in parallel, BlockError,
//	                Flow (gcov's per-function summary)
//	pendinglines.go provisional numbers for the lines of row sites until
//	                the line model has numbered its own
//
// gcc's line model (linemodel/doc.go maps its files):
//
//	planlines.go    the plan's side: building the model, numbering its
//	                lines first, LineCounts, InstanceCounts and
//	                ListedLine over it
//
// The in-process engine's plan over the table (breakpoint/jump/doc.go maps
// the trades it calls):
//
//	planjumps.go  PlanJumps, JumpPlan, the reasons a site keeps its int3,
//	              DeriveFlow
//	entryscan.go  the patch of an entry counted alone, planned from a
//	              linear scan of its function where no flow graph is
//	              needed, at plan time or at the entry's first need
//	              (PlanOptions.LazyEntries, planjumps.go's lazyEntries)
//	lazyfuncs.go  a function with a flow graph planned at its first hit
//	              (PlanOptions.LazyFuncs), the same plan, DerivedOf
//	shortsites.go short sites: a jmp rel8 to a landing in a host block's
//	              dead bytes, several to a host, ShortSite, Landing
//	wholeblock.go the tail a block displaced whole runs after it;
//	              Table.BuildTrampoline and its fallbacks
//	edgeplan.go   which arcs are counted in the target, so that a function's
//	              edges follow from its block counts
//	traparcs.go   the arc into a block that would trap counted instead
//	              (a nop before a loop head), so the block is derived
//	derivehot.go  leaving patchable blocks unplanted too, costliest first
//	padding.go    a function shorter than a jmp patched over the padding
//	              after it, IsPadding
package breakpoint
