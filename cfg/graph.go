package cfg

import (
	"fmt"
	"sort"
	"strings"
)

// Outside is the To of an Edge that leaves the function: a direct jump or
// conditional branch to another function (a tail call, or gcc's jump to a
// split-off foo.cold part).
const Outside = -1

// An EdgeKind says how control takes an Edge.
type EdgeKind uint8

// The kinds of edges. A conditional branch has one Taken and one
// Fallthrough edge; an unconditional direct jump has one Taken edge; an
// indirect jump through a table has one JumpTable edge per distinct
// target.
const (
	Fallthrough EdgeKind = iota // the next instruction in address order
	Taken                       // the target of a direct jump or of a conditional branch taken
	JumpTable                   // one entry (or several equal entries) of a jump table
	// Return goes from a call to its return address, the one edge of a
	// TermCall block (Options.SplitCalls): taken as often as the callee
	// returned, which may be less often than the block ran (exit,
	// longjmp, an exception).
	Return
)

func (k EdgeKind) String() string {
	switch k {
	case Fallthrough:
		return "fallthrough"
	case Taken:
		return "taken"
	case JumpTable:
		return "jumptable"
	case Return:
		return "return"
	}
	return "?"
}

// A Term says how a Block ends: what its last instruction is.
type Term uint8

// The ways a block ends.
const (
	// TermFall: the block ends because the next instruction is a leader;
	// its one edge is Fallthrough.
	TermFall Term = iota
	// TermJump: an unconditional direct jump inside the function.
	TermJump
	// TermCond: a conditional branch (Jcc, LOOP, JRCXZ, XBEGIN): edges
	// Taken then Fallthrough, so "branch 0" is the jump taken, as objdump
	// and perf show it. gcov -b numbers a condition's arcs in GCC's own
	// order (the GIMPLE true edge, then the false edge), and the compiler
	// often inverts a condition when it emits the jump, so matching gcov
	// must pair the two outcomes by count or by source, not by index.
	TermCond
	// TermTable: an indirect jump through a recovered jump table, or a
	// computed goto (Table.Computed), whose JumpTable edges go to every
	// label address the function takes.
	TermTable
	// TermReturn: RET.
	TermReturn
	// TermTailCall: a jump that leaves the function: direct (one Taken
	// edge to Outside) or through a pointer in memory (no edge).
	TermTailCall
	// TermNoReturn: a call to a function that does not return, or a call
	// with nothing but padding after it.
	TermNoReturn
	// TermTrap: UD2, UD0, UD1 or HLT, which never continue in user mode.
	TermTrap
	// TermCall: a call that returns, ending its block because
	// Options.SplitCalls asked for it; its one edge is Return, to the
	// return address.
	TermCall
)

func (t Term) String() string {
	switch t {
	case TermFall:
		return "fall"
	case TermJump:
		return "jump"
	case TermCond:
		return "cond"
	case TermTable:
		return "table"
	case TermReturn:
		return "return"
	case TermTailCall:
		return "tailcall"
	case TermNoReturn:
		return "noreturn"
	case TermTrap:
		return "trap"
	case TermCall:
		return "call"
	}
	return "?"
}

// A Block is a basic block: straight-line code entered only at Start and
// left only after its last instruction (calls inside it return to it,
// unless Options.SplitCalls ends blocks at calls).
type Block struct {
	Start uint64 // link-time address of the first instruction (a leader)
	End   uint64 // address just past the last instruction
	Last  uint64 // address of the last instruction
	Insts int    // number of instructions
	Term  Term   // how the block ends
	// Landing is set on a block entered from outside the function's
	// own flow besides the entry: Go's deferreturn landing pad, where the
	// runtime resumes the function after a recovered panic, or an
	// exception landing pad of Options.LandingPads, where the unwinder
	// enters a catch block or a cleanup.
	Landing bool

	firstEdge, numEdges int32 // Graph.Edges[firstEdge : firstEdge+numEdges] leave this block
}

// An Edge is a possible transfer of control from the end of block From to
// the start of block To (an index into Graph.Blocks, or Outside).
type Edge struct {
	From, To int
	Kind     EdgeKind
	Target   uint64 // address control goes to: Blocks[To].Start, or the outside address
}

// A Call is a call instruction inside a block. Calls do not end blocks
// (unless the callee does not return) and are not edges.
type Call struct {
	Addr     uint64 // link-time address of the call instruction
	Next     uint64 // return address: the instruction after the call
	Block    int    // index of the block holding the call
	Target   uint64 // direct call target; 0 for an indirect call
	Name     string // Options.CalleeName(Target), "" when unknown or indirect
	NoReturn bool   // the callee does not return (the call ends its block)
}

// A Table is a recovered jump table of a switch statement, or the targets
// of a computed goto (GNU C's goto *p).
type Table struct {
	Jump      uint64   // address of the indirect jump that uses the table
	Base      uint64   // link-time address of the table; 0 for a computed goto
	EntrySize int      // 4 (relative, PIE) or 8 (absolute); 0 for a computed goto
	Relative  bool     // entries are signed offsets added to Base (gcc -fPIC/-fPIE)
	Targets   []uint64 // target of every entry, in table order (may repeat)
	// Computed marks a computed goto: Targets are every code address of
	// the function it materialises as a value (lea, immediates, words of
	// data), in address order, as GCC gives a computed goto every label
	// whose address is taken. Some may never be jumped to.
	Computed bool
}

// A Graph is the control-flow graph of one function.
type Graph struct {
	Name   string  // Options.Name
	Addr   uint64  // entry; Blocks[0].Start
	End    uint64  // Addr + len(Options.Code)
	Blocks []Block // sorted by Start; Blocks[0] is the entry block
	// Edges are sorted by From; the edges of one block are in successor
	// order: Taken before Fallthrough for a conditional branch, table
	// order (first occurrence) for a jump table.
	Edges   []Edge
	Calls   []Call  // sorted by Addr
	Tables  []Table // sorted by Jump
	Padding int     // bytes of nop or int3 padding no control reaches
	// Dead counts the bytes of unreachable code skipped after calls that
	// do not return (code the compiler emitted after a call it did not
	// know to be final); they are in no block.
	Dead int
}

// Succs returns the edges leaving block b, in successor order. The slice
// is shared with g.Edges.
func (g *Graph) Succs(b int) []Edge {
	bl := &g.Blocks[b]
	return g.Edges[bl.firstEdge : bl.firstEdge+bl.numEdges]
}

// SuccIndex returns the index in g.Edges of the first edge leaving block b;
// the block's edges are g.Edges[i : i+len(g.Succs(b))].
func (g *Graph) SuccIndex(b int) int { return int(g.Blocks[b].firstEdge) }

// BlockAt returns the index of the block whose [Start, End) holds addr.
func (g *Graph) BlockAt(addr uint64) (int, bool) {
	i := sort.Search(len(g.Blocks), func(i int) bool { return g.Blocks[i].Start > addr }) - 1
	if i < 0 || addr >= g.Blocks[i].End {
		return 0, false
	}
	return i, true
}

// EdgeIndex returns the index in g.Edges of the edge from block from to
// block to (to may be Outside only with the target address known, so it is
// not accepted here). A block has at most one edge to each other block:
// a conditional branch whose target is the next instruction keeps only its
// Taken edge, and equal jump-table entries share one edge.
func (g *Graph) EdgeIndex(from, to int) (int, bool) {
	if from < 0 || from >= len(g.Blocks) || to < 0 {
		return 0, false
	}
	bl := &g.Blocks[from]
	for i := bl.firstEdge; i < bl.firstEdge+bl.numEdges; i++ {
		if g.Edges[i].To == to {
			return int(i), true
		}
	}
	return 0, false
}

// CondBranches returns the number of blocks that end in a conditional
// branch.
func (g *Graph) CondBranches() int {
	n := 0
	for i := range g.Blocks {
		if g.Blocks[i].Term == TermCond {
			n++
		}
	}
	return n
}

// String formats g compactly, one block after another, as the test
// corpora spell graphs: "START-END/INSTS:TERM>SUCCS", where each successor
// is t (taken), f (fallthrough) or j (jump table) followed by a block
// index, or by @ADDR for an edge leaving the function; addresses are hex
// without 0x. A landing block is marked with a leading !.
func (g *Graph) String() string {
	var sb strings.Builder
	for i := range g.Blocks {
		b := &g.Blocks[i]
		if i > 0 {
			sb.WriteByte(' ')
		}
		if b.Landing {
			sb.WriteByte('!')
		}
		fmt.Fprintf(&sb, "%x-%x/%d:%v", b.Start, b.End, b.Insts, b.Term)
		for k, e := range g.Succs(i) {
			if k == 0 {
				sb.WriteByte('>')
			} else {
				sb.WriteByte(',')
			}
			sb.WriteByte("ftjr"[e.Kind])
			if e.To == Outside {
				fmt.Fprintf(&sb, "@%x", e.Target)
			} else {
				fmt.Fprintf(&sb, "%d", e.To)
			}
		}
	}
	return sb.String()
}
