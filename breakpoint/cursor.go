package breakpoint

// A Cursor is one thread's position for line counting. The line count is
// defined so that it agrees with gcov, which counts how often control entered a
// line, not how many of the line's machine-code pieces ran: a trap at row R
// (line L, function F) is an entry to L when the previous line trap in the same
// activation of F
//
//   - does not exist, or
//   - was on another line, or
//   - was at an address >= R's (a backward jump: another trip round a loop that
//     stays on one line, which gcov counts through its cycle detection),
//
// or when R is F's entry (a new call). A `for` line whose body runs n times
// therefore counts n+1, as gcov shows, where summing every row's traps would
// give 2n+1 or more; and returning from a call into the middle of a line, which
// often has a row of its own after the call, is not a new entry.
//
// Activations are told apart by the stack pointer: a trap at a function entry
// opens one (its SP is the slot of the return address), and a trap at a higher
// SP than an open activation's means that activation has returned. Where the
// stack does not tell (an entry that is not planted, a Go goroutine switch),
// the last trap in F by this thread stands in for the activation's.
//
// Block counting (Table.SetBlocks) rides on the same activations: each keeps
// the last block it entered, and a trap at a block start counts the edge from
// that block. In Go, the stack check before the entry site runs outside any
// activation (and again after each stack growth); its blocks chain through
// the cursor's pre-entry block instead.
type Cursor struct {
	stack []activation
	last  map[int32]int32 // function index -> last line site, the fallback
	blk   map[int32]int32 // function index -> last block, the fallback
	pre   preBlock        // the last block of a Go stack check, before its entry site
	ind   indirectCall    // the indirect call the last trap began (indirect.go)
}

type activation struct {
	sp    uint64 // SP at the entry trap
	fn    int32
	last  int32 // last line site in this activation, -1 if none
	block int32 // last table-wide block in this activation, -1 if none
}

// A preBlock is a block run before its function's activation opened.
type preBlock struct {
	fn    int32 // function index + 1; 0 when none
	block int32
}

// maxDepth bounds the activation stack; deeper recursion falls back to the
// per-function position for its outermost frames.
const maxDepth = 1 << 20

// Clone returns an independent copy, for a forked child that continues from its
// parent's position.
func (c *Cursor) Clone() Cursor {
	n := Cursor{last: make(map[int32]int32, len(c.last)), pre: c.pre, ind: c.ind}
	for k, v := range c.last {
		n.last[k] = v
	}
	if c.blk != nil {
		n.blk = make(map[int32]int32, len(c.blk))
		for k, v := range c.blk {
			n.blk[k] = v
		}
	}
	n.stack = append([]activation(nil), c.stack...)
	return n
}

// An Undo reverses one Hit, for a trap whose instruction did not run after all
// (a signal handler ran first; the instruction will trap again on return).
type Undo struct {
	site    int32
	fn      int32
	prev    int32
	hadPrev bool
	line    bool
	pushed  bool  // the hit opened an activation
	topPrev int32 // the top activation's last before the hit, when it was used
	usedTop bool
	entries uint64 // bit k set: Lines(site)[k] was counted as entered

	blk            bool     // the site is a block start: hitBlock ran
	edge           int32    // table-wide edge counted, plus one; 0 for an arrival
	blkTop         int32    // the top activation's block before the hit, when used
	blkUsedTop     bool     //
	blkFallback    int32    // the cursor's fallback block of the function before the hit
	blkHadFallback bool     //
	pre            preBlock // the cursor's pre-entry block before the hit
	// replaced is the activation a jump back to the entry closed (see
	// Table.entryJump), reopened by Unhit.
	replaced    activation
	hadReplaced bool
	// ind is the cursor's pending indirect call before the hit; indArc
	// the indirect call's callee the hit counted, with indCounted.
	ind        indirectCall
	indArc     IndirectArc
	indCounted bool
	// entry is the table entry HitEntry counted at the trap, plus one; 0
	// for none.
	entry int32
}

// Hit counts one trap at site i by the thread whose cursor is c and whose stack
// pointer is sp.
func (t *Table) Hit(c *Cursor, i int, sp uint64) Undo {
	t.cnt.Hits[i]++
	u := Undo{site: int32(i)}
	fn := t.fn[i]
	entry := t.flags[i]&flagEntry != 0
	if t.indirect != nil {
		t.hitIndirect(c, i, sp, entry, &u)
	}
	block := t.flags[i]&uint8(KindBlock) != 0 && t.blk != nil
	jump := int32(-1)
	if entry {
		if block {
			if jump = t.entryJump(c, fn, sp); jump >= 0 {
				u.replaced, u.hadReplaced = c.stack[len(c.stack)-1], true
			}
		}
		for len(c.stack) > 0 && c.stack[len(c.stack)-1].sp <= sp {
			c.stack = c.stack[:len(c.stack)-1]
		}
		if len(c.stack) >= maxDepth {
			c.stack = append(c.stack[:0], c.stack[len(c.stack)/2:]...)
		}
		c.stack = append(c.stack, activation{sp: sp, fn: fn, last: -1, block: -1})
		u.pushed = true
	} else {
		for len(c.stack) > 0 && c.stack[len(c.stack)-1].sp < sp {
			c.stack = c.stack[:len(c.stack)-1]
		}
	}
	if block {
		t.hitBlock(c, i, entry, jump, &u)
	}
	if t.flags[i]&uint8(KindLine) == 0 {
		return u
	}
	if c.last == nil {
		c.last = make(map[int32]int32, 8)
	}
	prev, ok := c.last[fn]
	u.fn, u.prev, u.hadPrev, u.line = fn, prev, ok, true
	var top *activation
	if n := len(c.stack); n > 0 && c.stack[n-1].fn == fn {
		top = &c.stack[n-1]
		u.usedTop, u.topPrev = true, top.last
		prev, ok = top.last, top.last >= 0
	}
	fresh := !ok || entry || t.addr[i] <= t.addr[prev]
	for k, l := range t.Lines(i) {
		if fresh || !containsInt32(t.Lines(int(prev)), l) {
			t.cnt.LineEntries[l]++
			if k < 64 {
				u.entries |= 1 << k
			}
		}
	}
	c.last[fn] = int32(i)
	if top != nil {
		top.last = int32(i)
	}
	return u
}

// Unhit reverses the Hit that returned u. It must be the cursor's latest Hit.
// Activations the hit found returned stay closed: the thread did get there.
func (t *Table) Unhit(c *Cursor, u Undo) {
	i := int(u.site)
	t.cnt.Hits[i]--
	if t.indirect != nil {
		t.unhitIndirect(c, u)
	}
	if t.entries != nil {
		t.unhitEntry(u)
	}
	if u.blk {
		t.unhitBlock(c, u)
	}
	if u.line {
		for k, l := range t.Lines(i) {
			if k < 64 && u.entries&(1<<k) != 0 {
				t.cnt.LineEntries[l]--
			}
		}
		if u.hadPrev {
			c.last[u.fn] = u.prev
		} else {
			delete(c.last, u.fn)
		}
		if u.usedTop && !u.pushed && len(c.stack) > 0 {
			c.stack[len(c.stack)-1].last = u.topPrev
		}
	}
	if u.pushed && len(c.stack) > 0 {
		c.stack = c.stack[:len(c.stack)-1]
		if u.hadReplaced {
			c.stack = append(c.stack, u.replaced)
		}
	}
}
