package profile

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// KindBlock is the Site.Kind part of a site at the start of a basic block
// (--blocks). A site's kind lists what it counts, comma-separated, in the
// order line, func, block: "block", "line,block", "func,block",
// "line,func,block", besides KindLine, KindFunc and KindLineFunc.
const KindBlock = "block"

// siteKinds are the parts of Site.Kind, in canonical order.
var siteKinds = [...]string{KindLine, KindFunc, KindBlock}

// validKind reports whether k is a non-empty, canonical list of site kinds.
func validKind(k string) bool {
	next := 0
	for _, part := range strings.Split(k, ",") {
		i := slices.Index(siteKinds[:], part)
		if i < next {
			return false
		}
		next = i + 1
	}
	return true
}

// UnionKind returns the canonical kind of a site that counts what a and b
// count (Merge of sites that were planted for different things).
func UnionKind(a, b string) string {
	has := strings.Split(a, ",")
	has = append(has, strings.Split(b, ",")...)
	var out []string
	for _, k := range siteKinds {
		if slices.Contains(has, k) {
			out = append(out, k)
		}
	}
	return strings.Join(out, ",")
}

// The values of Edge.Kind: how control takes the edge (package cfg).
const (
	EdgeFallthrough = "fallthrough" // to the next instruction in address order
	EdgeTaken       = "taken"       // a direct jump, or a conditional branch taken
	EdgeJumpTable   = "jumptable"   // an indirect jump through a switch's jump table
	// EdgeReturn goes from a block ending in a call to the call's return
	// address: its count is how often the callee returned, which may be
	// less than the block's (exit, longjmp, an exception in the callee).
	EdgeReturn = "return"
)

// A Block is one basic block of a block-counted function (--blocks): straight
// line code entered only at its first instruction.
type Block struct {
	// Address is the link-time address of the block's first instruction.
	Address Address `json:"address"`
	// End is the link-time address just past its last instruction.
	End Address `json:"end"`
	// Function is the link-time entry address of the function holding it.
	Function Address `json:"function"`
	// Count is how many times the block ran (traps at Address).
	Count uint64 `json:"count"`
	// Entries is how many of those arrivals came along none of the
	// function's edges: for the function's first block, its entries
	// (calls, tail calls); for another block, arrivals the monitor could
	// not attribute to an edge (Go's deferreturn landing pad, a longjmp).
	Entries uint64 `json:"entries,omitempty"`
	// Module is the path of the module the block belongs to; "" is the
	// profile's executable.
	Module string `json:"module,omitempty"`
	// Samples and TimeNS are the CPU time sampled in it (--time): the
	// number of samples and the time they stand for, in nanoseconds.
	Samples uint64 `json:"samples,omitempty"`
	TimeNS  uint64 `json:"time_ns,omitempty"`
}

// An Edge is one possible transfer of control from the end of one block of a
// function to the start of another (or out of the function), with how often
// it was taken. For every block, Count equals the sum of the counts of the
// edges entering it plus its Entries (flow conservation).
type Edge struct {
	// From is the Address of the block the edge leaves.
	From Address `json:"from"`
	// To is the Address of the block it enters; with Exits, the address
	// outside the function it jumps to (a tail call).
	To Address `json:"to"`
	// Kind is EdgeFallthrough, EdgeTaken, EdgeJumpTable or EdgeReturn.
	Kind string `json:"kind"`
	// Exits is true for a jump that leaves the function. Its count is not
	// measured (nothing traps at its target in this function) and stays 0.
	Exits bool `json:"exits,omitempty"`
	// Count is how many times control went along the edge.
	Count uint64 `json:"count"`
	// Module is the path of the module the edge belongs to; "" is the
	// profile's executable.
	Module string `json:"module,omitempty"`
}

// A Branch is the outcomes of one conditional branch instruction, filed
// under the source line of its jump, as gcov -b reports them per line.
type Branch struct {
	// File and Line are the source line of the jump instruction.
	File string `json:"file"`
	Line int    `json:"line"`
	// Address is the link-time address of the conditional jump.
	Address Address `json:"address"`
	// Taken is how many times the jump was taken.
	Taken uint64 `json:"taken"`
	// NotTaken is how many times it fell through.
	NotTaken uint64 `json:"not_taken"`
	// Target is the link-time address the jump goes to when taken; 0 (left
	// out of the JSON) in profiles written before it was recorded. No
	// conditional jump of a program's code goes to address 0, the ELF
	// header's place.
	Target Address `json:"target,omitempty"`
	// TrueFallthrough says, for a forward jump, that the condition's
	// true arc (gcov's first) is the fall-through, as patchprof infers it
	// from where the two arcs lead: GCC -O0 usually jumps over the code
	// that runs when an if's condition holds, but straight to a `break`.
	TrueFallthrough bool `json:"true_fallthrough,omitempty"`
	// Module is the path of the module the branch belongs to; "" is the
	// profile's executable.
	Module string `json:"module,omitempty"`
}

// Backward reports whether the jump goes to a lower address: the test at
// the bottom of a loop, which GCC -O0 emits as jumping when its condition
// holds (the true arc, gcov's first).
func (b Branch) Backward() bool {
	return b.Target != 0 && b.Target <= b.Address
}

// A Call is one call instruction of a block-counted function, filed under
// the source line of the call, with how often it ran and how often the
// callee returned: gcov -b's "call N returned X".
type Call struct {
	File    string  `json:"file"`
	Line    int     `json:"line"`
	Address Address `json:"address"` // link-time address of the call instruction
	// Count is how many times the call was made.
	Count uint64 `json:"count"`
	// Returned is how many times the callee returned to it: less than
	// Count when it exited, longjmp'd or threw; more for setjmp, which
	// returns again for every longjmp to it.
	Returned uint64 `json:"returned"`
	// Module is the path of the module the call belongs to; "" is the
	// profile's executable.
	Module string `json:"module,omitempty"`
}

// HasBlocks reports whether p counted basic blocks.
func (p *Profile) HasBlocks() bool { return len(p.Blocks) > 0 }

// validateBlocks checks the block, edge and branch fields (see
// docs/profile-format.md, "blocks").
func (p *Profile) validateBlocks(modules map[string]bool) error {
	bad := func(field, msg string) error { return &FormatError{Field: field, Msg: msg} }
	blocks := make(map[modAddr]bool, len(p.Blocks))
	for i, b := range p.Blocks {
		field := "blocks[" + strconv.Itoa(i) + "]"
		if !modules[b.Module] {
			return bad(field+".module", strconv.Quote(b.Module)+" is not in modules")
		}
		a := b.Address
		if b.End <= a {
			return bad(field+".end", b.End.String()+": want an address after "+a.String())
		}
		if b.Function > a {
			return bad(field+".function", b.Function.String()+": want the entry of the function holding "+a.String())
		}
		if b.Entries > b.Count {
			return bad(field+".entries", "more entries than the block's count")
		}
		if blocks[modAddr{b.Module, a}] {
			return bad(field, "address "+a.String()+" listed twice")
		}
		blocks[modAddr{b.Module, a}] = true
	}
	edges := make(map[modEdge]bool, len(p.Edges))
	for i, e := range p.Edges {
		field := "edges[" + strconv.Itoa(i) + "]"
		if !modules[e.Module] {
			return bad(field+".module", strconv.Quote(e.Module)+" is not in modules")
		}
		from, to := e.From, e.To
		if !blocks[modAddr{e.Module, from}] {
			return bad(field+".from", from.String()+" is not a block")
		}
		if !e.Exits && !blocks[modAddr{e.Module, to}] {
			return bad(field+".to", to.String()+" is not a block (and the edge does not exit)")
		}
		switch e.Kind {
		case EdgeFallthrough, EdgeTaken, EdgeJumpTable, EdgeReturn:
		default:
			return bad(field+".kind", strconv.Quote(e.Kind)+": want "+EdgeFallthrough+", "+EdgeTaken+", "+EdgeJumpTable+" or "+EdgeReturn)
		}
		k := modEdge{e.Module, from, to}
		if edges[k] {
			return bad(field, "edge "+from.String()+" -> "+to.String()+" listed twice")
		}
		edges[k] = true
	}
	// Branches and calls are filed under a source line, one per address.
	type filed struct {
		module, file string
		address      Address
		line         int
	}
	checkFiled := func(list string, items []filed) error {
		seen := make(map[modAddr]bool, len(items))
		for i, it := range items {
			field := list + "[" + strconv.Itoa(i) + "]"
			if !modules[it.module] {
				return bad(field+".module", strconv.Quote(it.module)+" is not in modules")
			}
			if it.file == "" {
				return bad(field+".file", "empty")
			}
			if it.line < 1 {
				return bad(field+".line", strconv.Itoa(it.line)+": want >= 1")
			}
			if seen[modAddr{it.module, it.address}] {
				return bad(field, "address "+it.address.String()+" listed twice")
			}
			seen[modAddr{it.module, it.address}] = true
		}
		return nil
	}
	var brs, calls []filed
	for _, b := range p.Branches {
		brs = append(brs, filed{b.Module, b.File, b.Address, b.Line})
	}
	for _, c := range p.Calls {
		calls = append(calls, filed{c.Module, c.File, c.Address, c.Line})
	}
	if err := checkFiled("branches", brs); err != nil {
		return err
	}
	if err := checkFiled("calls", calls); err != nil {
		return err
	}
	return nil
}

// sortBlocks puts blocks, edges and branches in canonical order: by module,
// then address (edges by source then target; branches by file, line, then
// address).
func (p *Profile) sortBlocks() {
	slices.SortStableFunc(p.Blocks, func(a, b Block) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), cmp.Compare(a.Address, b.Address))
	})
	slices.SortStableFunc(p.Edges, func(a, b Edge) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	slices.SortStableFunc(p.Branches, func(a, b Branch) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Address, b.Address))
	})
	slices.SortStableFunc(p.Calls, func(a, b Call) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Address, b.Address))
	})
}

// blockMerger sums the block, edge and branch counts of several profiles.
type blockMerger struct {
	blocks   map[modAddr]int
	edges    map[modEdge]int
	branches map[modAddr]int
	calls    map[modAddr]int
	sat      *saturator
}

// A modAddr is an address in a module (its path, "" for the executable).
type modAddr struct {
	module string
	addr   Address
}

// A modEdge is an edge between two addresses of a module.
type modEdge struct {
	module   string
	from, to Address
}

func (m *blockMerger) add(out, p *Profile) {
	if m.blocks == nil {
		m.blocks = map[modAddr]int{}
		m.edges = map[modEdge]int{}
		m.branches = map[modAddr]int{}
		m.calls = map[modAddr]int{}
	}
	for _, c := range p.Calls {
		k := modAddr{c.Module, c.Address}
		if i, ok := m.calls[k]; ok {
			m.sat.add(&out.Calls[i].Count, c.Count)
			m.sat.add(&out.Calls[i].Returned, c.Returned)
			continue
		}
		m.calls[k] = len(out.Calls)
		out.Calls = append(out.Calls, c)
	}
	for _, b := range p.Blocks {
		k := modAddr{b.Module, b.Address}
		if i, ok := m.blocks[k]; ok {
			m.sat.add(&out.Blocks[i].Count, b.Count)
			m.sat.add(&out.Blocks[i].Entries, b.Entries)
			m.sat.add(&out.Blocks[i].Samples, b.Samples)
			m.sat.add(&out.Blocks[i].TimeNS, b.TimeNS)
			continue
		}
		m.blocks[k] = len(out.Blocks)
		out.Blocks = append(out.Blocks, b)
	}
	for _, e := range p.Edges {
		k := modEdge{e.Module, e.From, e.To}
		if i, ok := m.edges[k]; ok {
			m.sat.add(&out.Edges[i].Count, e.Count)
			continue
		}
		m.edges[k] = len(out.Edges)
		out.Edges = append(out.Edges, e)
	}
	for _, b := range p.Branches {
		k := modAddr{b.Module, b.Address}
		if i, ok := m.branches[k]; ok {
			m.sat.add(&out.Branches[i].Taken, b.Taken)
			m.sat.add(&out.Branches[i].NotTaken, b.NotTaken)
			continue
		}
		m.branches[k] = len(out.Branches)
		out.Branches = append(out.Branches, b)
	}
}

// finish recomputes each function's executed blocks from the merged blocks.
func (m *blockMerger) finish(out *Profile) {
	if len(out.Blocks) == 0 {
		return
	}
	executed := map[modAddr]int{}
	for _, b := range out.Blocks {
		if b.Count > 0 {
			executed[modAddr{b.Module, b.Function}]++
		}
	}
	for i := range out.Functions {
		f := &out.Functions[i]
		if f.Blocks > 0 {
			f.BlocksExecuted = executed[modAddr{f.Module, f.Address}]
		}
	}
}
