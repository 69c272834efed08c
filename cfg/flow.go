package cfg

// A FlowError is a block whose count differs from the sum of the counts
// of the edges entering it (plus the function's entries, for the entry
// block).
type FlowError struct {
	Block int    // index into Graph.Blocks
	Count uint64 // the block's count
	In    uint64 // sum of its incoming edge counts (and entries)
}

// CheckFlow checks flow conservation in one function: every block was
// entered as often as control arrived on its incoming edges. blocks[i] is
// the count of g.Blocks[i], edges[i] the count of g.Edges[i], and entries
// the number of times the function was entered from outside (calls, and
// jumps from other functions such as a tail call), counted as incoming to
// the entry block. It returns the blocks where count != sum(incoming), in
// block order, or nil. Landing blocks (Block.Landing) are entered from
// the runtime and are not checked. A length mismatch between the counts and the graph
// is reported on every block.
func CheckFlow(g *Graph, blocks, edges []uint64, entries uint64) []FlowError {
	in := make([]uint64, len(g.Blocks))
	if len(in) > 0 {
		in[0] = entries
	}
	for i, e := range g.Edges {
		if e.To == Outside || e.To < 0 || e.To >= len(in) {
			continue
		}
		if i < len(edges) {
			in[e.To] += edges[i]
		}
	}
	var bad []FlowError
	for i := range g.Blocks {
		var c uint64
		if i < len(blocks) {
			c = blocks[i]
		}
		if g.Blocks[i].Landing && len(blocks) == len(g.Blocks) && len(edges) == len(g.Edges) {
			continue
		}
		if c != in[i] || len(blocks) != len(g.Blocks) || len(edges) != len(g.Edges) {
			bad = append(bad, FlowError{Block: i, Count: c, In: in[i]})
		}
	}
	return bad
}
