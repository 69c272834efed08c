package cfg

// The constants registers hold on entry to each block, by constant
// propagation over the function's graph (Kildall, "A Unified Approach to
// Global Program Optimization", 1973): gcc -O2 loads a table's address
// into a callee-saved register once, before a loop that may run many
// blocks and calls before the dispatch (a lexer's `switch (*p)` inside its
// scanning loop), further back than any bounded search of predecessors
// reaches.
//
// Each block's effect on a register is one of: a constant, a copy of a
// register's value on entry to the block (itself when the block leaves it
// alone), or anything. A register holds c on entry to a block when every
// path to the block from the function's entry leaves c in it; the entry
// and blocks with no predecessor in the graph (landing pads, entered by
// the unwinder) hold nothing known.

// Lattice values of a register on entry to a block.
const (
	fUnset  uint8 = iota // no path seen yet
	fConst               // the constant c on every path
	fVaries              // not one constant
)

// A fact is what is known of one register on entry to a block.
type fact struct {
	k uint8
	c uint64
}

// Kinds of a block's effect on a register (effect).
const (
	eVaries uint8 = iota // anything
	eConst               // the constant c
	eCopy                // the value register from held on entry
)

// An effect is what a block leaves in one register.
type effect struct {
	k    uint8
	from int8
	c    uint64
}

// meet combines the facts two paths give.
func meet(x, y fact) fact {
	switch {
	case x.k == fUnset:
		return y
	case y.k == fUnset:
		return x
	case x.k == fConst && y.k == fConst && x.c == y.c:
		return x
	}
	return fact{k: fVaries}
}

// constAtEntry returns the constant register reg holds on entry to block,
// when every path to it leaves the same one there.
func (b *builder) constAtEntry(block, reg int) (uint64, bool) {
	facts := b.entryFacts()
	if block < 0 || block >= len(facts) || reg < 0 || reg >= 16 {
		return 0, false
	}
	f := facts[block][reg]
	return f.c, f.k == fConst
}

// entryFacts returns the facts on entry to every block of the current
// graph, computed once per graph.
func (b *builder) entryFacts() [][16]fact {
	if b.factsOf == b.g && b.facts != nil {
		return b.facts
	}
	nb := len(b.g.Blocks)
	effects := b.effects()
	in := make([][16]fact, nb)
	fixed := make([]bool, nb) // the entry, and blocks no edge enters
	for i := range nb {
		if i == 0 || len(b.preds(i)) == 0 {
			fixed[i] = true
			for r := range in[i] {
				in[i][r] = fact{k: fVaries}
			}
		}
	}
	// Round-robin until nothing changes: each fact only moves down the
	// three-level lattice, so this ends within 2*16*nb rounds, and in a
	// few on real graphs.
	for changed := true; changed; {
		changed = false
		for i := range nb {
			if fixed[i] {
				continue
			}
			var nf [16]fact
			for _, p := range b.preds(i) {
				for r := range nf {
					nf[r] = meet(nf[r], apply(effects[p][r], &in[p]))
				}
			}
			if nf != in[i] {
				in[i], changed = nf, true
			}
		}
	}
	b.facts, b.factsOf = in, b.g
	return in
}

// apply returns the fact a block with effect e on a register leaves in
// it, given the facts in on its entry.
func apply(e effect, in *[16]fact) fact {
	switch e.k {
	case eConst:
		return fact{k: fConst, c: e.c}
	case eCopy:
		return in[e.from]
	}
	return fact{k: fVaries}
}

// effects evaluates every block once with the symbolic machine, which
// looks into no predecessor (depth 0), and returns what each leaves in
// each register.
func (b *builder) effects() [][16]effect {
	saved := b.evals
	defer func() { b.evals = saved }()
	out := make([][16]effect, len(b.g.Blocks))
	for i := range out {
		b.evals = 0
		m := newMachine(b, i, 0)
		if !m.run(0) {
			continue // all eVaries
		}
		for r, v := range m.regs {
			switch {
			case v.k == vConst:
				out[i][r] = effect{k: eConst, c: v.c}
			case v.k == vIndex && v.scale == 1 && v.bound == 0 && !v.o.isMem && !v.o.call && v.o.width == 0 && v.o.reg >= 0:
				out[i][r] = effect{k: eCopy, from: v.o.reg}
			}
		}
	}
	return out
}
