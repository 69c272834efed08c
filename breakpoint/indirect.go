package breakpoint

// Indirect calls (--calls under the trap engines): which function a call
// through a register or memory entered. A block ends at its call, and
// every block start and function entry traps, so the next trap of the
// thread in the same table after the call's block is the callee's entry,
// when the callee is in this table and its stack pointer is the call's
// less the return address: the same stack pointer rules out a signal
// handler, or code outside the table calling back in (a qsort
// comparator), which run deeper. Under the in-process engine most blocks
// run without a trap, so a trap's predecessor is not known: it does not
// set IndirectCalls.

// An IndirectArc is an indirect call's block and the function it entered.
type IndirectArc struct {
	Block  int32 // table-wide index of the block ending in the call
	Callee int32 // the function entered, as the site's function index
}

// indirectCall is a cursor's pending indirect call: the block that ends in
// it (plus one; 0 when none) and the stack pointer its callee's entry has.
type indirectCall struct {
	block int32
	sp    uint64
}

// SetIndirectCalls gives t the blocks that end in an indirect call or
// tail jump, each with how it reaches its callee, and allocates
// Counts.Indirect. Call it
// after SetBlocks, before the first Hit, and only when every block start
// and function entry of t traps (the classic and xol engines).
func (t *Table) SetIndirectCalls(calls map[int32]IndirectCall) {
	t.indirect = calls
	t.cnt.Indirect = make(map[IndirectArc]uint64)
}

// hitIndirect counts, at the trap at site i with stack pointer sp, the
// callee of the indirect call the cursor's previous trap began, and notes
// a new one when site i starts a block ending in one. The undo records
// both.
func (t *Table) hitIndirect(c *Cursor, i int, sp uint64, entry bool, u *Undo) {
	u.ind = c.ind
	pending := c.ind
	c.ind = indirectCall{}
	// Go's stack check runs before the entry site, at the entry's stack
	// pointer: the call is counted there, before a morestack that could
	// move the goroutine to another thread (another cursor).
	if (entry || t.isPre(i)) && pending.block > 0 && pending.sp == sp {
		k := IndirectArc{Block: pending.block - 1, Callee: t.fn[i]}
		t.cnt.Indirect[k]++
		u.indCounted, u.indArc = true, k
	}
	if t.flags[i]&uint8(KindBlock) == 0 || t.siteBlock == nil {
		return
	}
	gb := t.siteBlock[i]
	if ic, ok := t.indirect[gb]; ok {
		c.ind = indirectCall{block: gb + 1, sp: uint64(int64(sp) + ic.Delta)}
	}
}

// isPre reports whether site i starts a block of Go's stack check, which
// runs before its function's entry site.
func (t *Table) isPre(i int) bool {
	if t.blk == nil || t.siteBlock == nil || t.flags[i]&uint8(KindBlock) == 0 {
		return false
	}
	return t.blk.flags[t.siteBlock[i]]&blockPre != 0
}

// unhitIndirect reverses hitIndirect.
func (t *Table) unhitIndirect(c *Cursor, u Undo) {
	if u.indCounted {
		t.cnt.Indirect[u.indArc]--
		if t.cnt.Indirect[u.indArc] == 0 {
			delete(t.cnt.Indirect, u.indArc)
		}
	}
	c.ind = u.ind
}

// A SetAside is the indirect call a cursor had pending when its thread was
// sent into a signal handler (Cursor.SetAside).
type SetAside struct{ ind indirectCall }

// SetAside takes c's pending indirect call out of the way of a signal
// handler's traps, which run deeper and would drop it (or replace it with
// one of their own): the call the signal interrupted is still to enter
// its callee when the handler returns.
func (c *Cursor) SetAside() SetAside {
	s := SetAside{c.ind}
	c.ind = indirectCall{}
	return s
}

// PutBack gives c back the pending call SetAside took, as the handler
// returns to where the signal found the thread.
func (c *Cursor) PutBack(s SetAside) { c.ind = s.ind }

// EntryAfter returns, for site i at the start of a Go function's stack
// check (which runs before the entry site, at the entry's stack pointer),
// the function's entry site; i itself when i is an entry; false for any
// other site.
func (t *Table) EntryAfter(i int) (int, bool) {
	if t.IsEntry(i) {
		return i, true
	}
	if !t.isPre(i) {
		return 0, false
	}
	fn := t.fn[i]
	for k := i + 1; k < len(t.addr) && t.fn[k] == fn; k++ {
		if t.IsEntry(k) {
			return k, true
		}
	}
	return 0, false
}
