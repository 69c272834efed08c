package breakpoint

// A Cursor is one thread's position for line counting: the last line site it
// trapped at inside each function. The line count is defined so that it agrees
// with gcov, which counts how often control entered a line, not how many of the
// line's machine-code pieces ran: a trap at row R (line L, function F) is an
// entry to L when the thread's previous line trap inside F
//
//   - does not exist, or
//   - was on another line, or
//   - was at an address >= R's (a backward jump: another trip round a loop that
//     stays on one line, which gcov counts through its cycle detection),
//
// or when R is F's entry (a new call, including a recursive one). Keeping the last
// trap per function rather than per thread means that returning from a call into
// the middle of a line is not a new entry. A `for` line whose body runs n times
// therefore counts n+1, as gcov shows, where summing every row's traps would give
// 2n+1 or more.
type Cursor struct {
	last map[int32]int32 // function index -> last line site
}

// Clone returns an independent copy, for a forked child that continues from its
// parent's position.
func (c *Cursor) Clone() Cursor {
	n := Cursor{last: make(map[int32]int32, len(c.last))}
	for k, v := range c.last {
		n.last[k] = v
	}
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
	entries uint64 // bit k set: Lines(site)[k] was counted as entered
}

// Hit counts one trap at site i by the thread whose cursor is c.
func (t *Table) Hit(c *Cursor, i int) Undo {
	t.Hits[i]++
	u := Undo{site: int32(i)}
	if t.flags[i]&uint8(KindLine) == 0 {
		return u
	}
	if c.last == nil {
		c.last = make(map[int32]int32, 8)
	}
	fn := t.fn[i]
	prev, ok := c.last[fn]
	u.fn, u.prev, u.hadPrev, u.line = fn, prev, ok, true
	fresh := !ok || t.flags[i]&flagEntry != 0 || t.addr[i] <= t.addr[prev]
	for k, l := range t.Lines(i) {
		if fresh || !containsInt32(t.Lines(int(prev)), l) {
			t.LineEntries[l]++
			if k < 64 {
				u.entries |= 1 << k
			}
		}
	}
	c.last[fn] = int32(i)
	return u
}

// Unhit reverses the Hit that returned u. It must be the cursor's latest Hit.
func (t *Table) Unhit(c *Cursor, u Undo) {
	i := int(u.site)
	t.Hits[i]--
	if !u.line {
		return
	}
	for k, l := range t.Lines(i) {
		if k < 64 && u.entries&(1<<k) != 0 {
			t.LineEntries[l]--
		}
	}
	if u.hadPrev {
		c.last[u.fn] = u.prev
	} else {
		delete(c.last, u.fn)
	}
}
