// Package breakpoint owns the site table: every address where patchprof plants an
// int3, the original byte it replaced, what the site counts (a line-table row, a
// function entry, or both), and the raw trap counts.
//
// It plans sites from the symbol table (symtab) and the line table (lineinfo),
// refusing any address that is not the start of an instruction, and plants and
// removes them through the small Memory interface, page by page, so that planting
// a hundred thousand sites costs a few hundred system calls rather than a hundred
// thousand PTRACE_POKETEXTs. It does not know about ptrace: the monitor hands it a
// Memory backed by /proc/PID/mem, and the tests hand it a fake.
//
// It also relocates an instruction to run out of line (relocate.go and its
// relocate_*.go neighbours), for the monitor's default engine, and keeps the
// per-activation state (Cursor) from which line entries and block edges are
// counted.
//
// The table is stored as parallel slices (structure of arrays) so that a binary
// with a million line rows costs tens of megabytes, not hundreds.
package breakpoint
