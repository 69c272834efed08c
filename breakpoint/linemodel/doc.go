// Package linemodel is gcc's line model: which block and arc counts make
// each source line's count, so that patchprof's line counts are gcov's.
//
// A function whose flow graph cfg recovers is counted by blocks, not at its
// rows, and its lines are derived after the run. For that each block must
// carry the lines of GCC's statements in it, and GCC's graph has blocks and
// statements the machine code does not: case and goto labels, loop
// latches, copies of a scope's clobbers, empty cases, statements -O0 emits
// no code for; and the line table has rows that are no statement of GCC's
// (an opening brace, an epilogue). The model reads the line rows, the
// DWARF subprograms, the code and the C source to put them back.
//
// It is built once, at planning (Build, from the flow graphs, the line
// rows, the source reader and which files the report keeps), and asked for
// counts after the run (Model.Counts, from plain slices of block, edge and
// arrival counts): it knows nothing of the site table, of planting or of
// the tracer, so that package breakpoint, which owns those, hands it plain
// data (breakpoint.Plan.LineCounts is the wrapper). gcov's rule itself, over
// blocks that carry lines and arcs with counts, stays in the top-level
// package linecount, which the model feeds: it is a separate concept (any
// graph with lines), already pure and tested on its own.
//
// Files:
//
//	model.go      LineRef, Graph, Inputs, Model, Build, NoLines,
//	              ListedLine: blocks carrying their statements' lines, and
//	              the rules that differ from the rows
//	counts.go     Model.Counts: line counts from block and arc counts (in
//	              linecount's terms), cut at a fault
//	instances.go  Model.FuncCounts: each function's own line counts, for
//	              the instances of a template
//	codeless.go   statements GCC keeps that -O0 emits no code for
//	epilogue.go   a closing brace's epilogue rows
//	labels.go     case and default labels read from the source,
//	              preprocessor conditionals above them
//	gotolabels.go goto labels and folded break or continue as blocks with
//	              no code; a goto label before a case label, and the
//	              macros that write case labels
//	jumps.go      break, continue, goto and return sharing a row; the jump
//	              past an else
//	loops.go      the latch of a loop with no condition
//	bracegoto.go  the jump past an else at a C++ then block's closing
//	              brace
//	vcall.go      a C++ virtual call's value, copied on the call's line
//	finally.go    the copies of a scope's clobbers, one per destination of
//	              the jumps leaving it
//	scopes.go     the brace-delimited scopes of a function's source, the
//	              names each declares, the innermost one of each line
//	fallthru.go   whether a scope's end falls through, from its last
//	              statement
//	locals.go     the locals whose scope ends with clobbers
//	caseentries.go each empty case counted apart from its jump-table
//	              entries, its values read from its label
//	emptycases.go cases whose statements compile to nothing, counted as a
//	              group; a label last in its switch with nothing after it
//	switchend.go  a trailing label's block at a switch's end that is a
//	              scope's end with clobbers
//	lazyre.go     the model's regular expressions, compiled at first use
//	index.go      each source file's lines read once (trimmed, code text,
//	              case labels), the arcs into each block, the line keys
//	              by file
package linemodel
