package breakpoint

// pendingLines numbers the lines of sites at rows before the line model
// has numbered its own: add gives a provisional number, resolve the final
// ones (Plan.lineRef, called in add's order: the order of the rows).
type pendingLines struct {
	refs  []LineRef
	funcs []int
	index map[LineRef]int32
}

func (pl *pendingLines) add(ref LineRef, fi int) int32 {
	if k, ok := pl.index[ref]; ok {
		return k
	}
	if pl.index == nil {
		pl.index = map[LineRef]int32{}
	}
	k := int32(len(pl.refs))
	pl.index[ref] = k
	pl.refs = append(pl.refs, ref)
	pl.funcs = append(pl.funcs, fi)
	return k
}

// resolve returns the final number of each provisional one.
func (pl *pendingLines) resolve(p *Plan) []int32 {
	final := make([]int32, len(pl.refs))
	for k, ref := range pl.refs {
		final[k] = p.lineRef(ref, pl.funcs[k])
	}
	return final
}
