// Package profiler owns one profiling run for every front end: the command
// line (cmd/patchprof), and the live endpoints of --listen (package serve),
// which read Snapshot while the run goes on.
//
// Open reads the target's executable and plans what to plant in it: the
// selection of what is counted (lines, functions, blocks; --func, --file,
// --std, --lib), the planning options it gives breakpoint.NewPlan (the Go
// filter and stack-check prologue, the flow graphs' jump tables, callees
// and landing pads, the in-process engine's jumps), and the launcher
// decision (a system program without what was asked for is run, and only
// the programs it starts are profiled). Run runs the target under the
// monitor, planning each shared library and exec'd program as the monitor
// meets it, and assembles the monitor's counts into a profile.Profile:
// lines derived from blocks, functions, blocks, branches and calls, the
// exit or the crash site, and the notes that say how the run was served.
// Snapshot returns the profile of the moment while Run runs. With --time,
// the run samples CPU time (package sampler, or the monitor's ptrace
// interrupts where the kernel refuses perf events) and resolves the samples
// to lines, functions and blocks. Disasm builds the annotated disassembly
// of the block-counted functions (--disasm).
//
// It does not parse flags, own the terminal or the target's signals, or
// render anything: a front end keeps its flags, its terminal, its signals
// and its output (package output renders a profile and the disassembly,
// package serve serves it). It does not trace (package monitor), plan sites
// (package breakpoint) or save and merge profiles (package profile).
//
// Data flows one way: the readers (symtab, lineinfo, cfg) feed breakpoint,
// the monitor runs the plan, the profiler assembles the profile, and
// output renders it. Models: delve's service/debugger, one layer shared by
// every front end, and pprof's driver.
//
// Files:
//
//	profiler.go Config, Target, Hooks, UserError; Open, Run, Snapshot,
//	            Close, Modules; ELF errors worded for the user
//	modules.go  the selection and the modules: what is counted in each
//	            file a process maps (the monitor's Options.Images), the
//	            plan options, system directories, --lib
//	cache.go    the analysis cache's part (package anacache): each
//	            module's line table and subprograms read from it or
//	            computed and stored, and the notes on what it served
//	gofilter.go telling Go programs, the Go runtime and standard library,
//	            and dynamically linked programs apart; the launcher's note
//	goresume.go where asynchronously preempted goroutines resume
//	            (runtime.asyncPreempt's ret), for the in-process engine
//	goruntime.go the Go runtime's data an attach without system-call
//	            stops reads: each thread's signal stack, the room of the
//	            Resume site's gate
//	sections.go functions clipped to the executable section of their entry
//	blocks.go   the flow graphs' options (jump tables, callees, landing
//	            pads); block, edge, branch and call counts in the profile;
//	            notes on functions without block counts
//	arcs.go     --calls: each call site's arcs from its block's count,
//	            PLT callees bound across modules, the unknown rest
//	assemble.go the profile from the monitor's counts: every module's
//	            lines, functions, blocks and template instances, the exit
//	            and the crash site
//	jumps.go    the notes on how the in-process engine served the run
//	time.go     --time: the timeline of layouts and samples, resolved to
//	            lines, functions and blocks
//	stacks.go   --time: the sampled call chains, resolved to frames
//	outside.go  --time: a chain sampled in a file that is not counted,
//	            its frame named by the file's ELF symbols
//	unwind.go   --time: the chains walked by each image's call frame
//	            information, the kernel's frame-pointer chain past it
//	fallback.go --time-fallback: the ptrace interrupts in place of perf
//	            events, and the notes on the refusal
//	disasm.go   Disasm: the annotated disassembly (--disasm)
package profiler
