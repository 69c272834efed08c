// Command cfgstat builds the control-flow graph of every function of an
// executable and reports how many could not be recovered, and why.
//
//	go run ./cfg/internal/cfgstat [-v] [-func REGEXP] EXECUTABLE
//
// It is the test-free way to see what package cfg makes of a real binary:
// one summary line (functions, recovered ones with their blocks, edges and
// jump tables, unrecoverable ones, time taken), then per reason
// (cfg.Error.Reason) how many functions and one example. -v lists every
// unrecoverable function with its error; -func prints the blocks, edges,
// calls and jump tables of the matching functions.
//
// It is a developer's tool, internal to the module, and not part of
// patchprof.
//
// Files:
//
//	main.go: the flags, the pass over symtab's functions, the report
package main
