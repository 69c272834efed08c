// Package linecount derives how often control entered each source line
// from the counts of basic blocks and of the arcs between them, with the
// algorithm gcov uses (GCC's gcov.cc, add_line_counts and
// accumulate_line_info), so that a line's count means what it means to
// gcov users.
//
// Each block carries the lines of its statements, each once, in the order
// they first appear in it; a block is listed under the last of them. Then:
//
//   - a line under which blocks are listed counts the arcs that enter those
//     blocks from blocks not listed under it (calls, jumps and fall-through
//     from other lines, arrivals from nowhere such as a longjmp), plus, for
//     every loop that never leaves the line (a one-line loop), how often it
//     went round, found as the elementary cycles of the line's blocks;
//   - a line under which no block is listed counts the runs of the blocks
//     it appears in.
//
// A `for` line whose body runs n times so counts n+1, a condition over
// several lines counts once per evaluation, and a line that is only the
// tail of a block (the code after a call returns) counts the block's
// arrivals.
//
// linecount is pure: graphs and counts in, counts out. Which lines a block
// has, and which machine code makes a block, is decided by its caller
// (package breakpoint/linemodel).
//
// Files:
//
//	linecount.go: Func, Block, Arc and Result, and Lines, the whole
//	    derivation, with the search for one-line loops (elementary cycles)
package linecount
