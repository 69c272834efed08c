//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/jump"
)

// Indirect calls under the in-process engine (breakpoint/jump, calls.go):
// a trampoline records the call its block ends in as pending in the
// thread's slab, and a function entry's trampoline counts it in its
// function's slots. The monitor's part: reading the slots into the table
// (foldCalls), and playing both parts at a site that traps instead (a
// site that kept its breakpoint), with the same words when the thread has
// a slab and with the thread's own record before it has one.

// pendCall is a pending indirect call kept by the monitor for a thread
// without a slab: the block's mapping and site, the distance its callee's
// entry is expected at, the block's stack pointer, and the low half of
// the return address the call pushes.
type pendCall struct {
	mp   *mapping
	site int
	want uint32
	sp   uint64
	ret  uint32
	tail bool // an indirect tail jump's (jump.TailKey)
}

// callTrap plays the trampolines' parts at a trap of t at site i of mp,
// whose stack pointer is rsp: an entry counts the call pending, a block
// that ends in an indirect call records its own.
//
// Preconditions: on the tracer thread; t is stopped at the trap.
func (m *mon) callTrap(t *thread, mp *mapping, i int, rsp uint64) {
	if !m.jumpOn || !mp.tab.TracksCalls() {
		return
	}
	if e, ok := mp.tab.EntryAfter(i); ok {
		m.enteredBy(t, mp, e, rsp)
	}
	if d, ok := mp.tab.PendDelta(i); ok {
		p := pendCall{mp: mp, site: i, want: jump.EntryDistance(d), sp: rsp, ret: uint32(mp.tab.PendRet(i)), tail: mp.tab.PendTail(i)}
		if p.tail {
			// The callee's return address, at its stack pointer.
			ret, ok := m.lowWord(t, uint64(int64(rsp)+int64(d)))
			if !ok {
				return
			}
			p.ret = ret
		}
		m.setPend(t, p)
	}
}

// enteredBy counts the pending call of t as the one that entered the
// function whose entry is site i of mp, when it is (its stack pointer at
// the entry is rsp, and it is no tail jump of the function's own, which
// is stale: jump.EntryCheck), and clears it either way.
//
// Preconditions: on the tracer thread; t is stopped at the entry (its
// trampoline's count not taken).
func (m *mon) enteredBy(t *thread, mp *mapping, i int, rsp uint64) {
	p, ok := m.takePend(t)
	if !ok || p.mp != mp || p.tail && mp.tab.Func(p.site) == mp.tab.Func(i) {
		return
	}
	if uint32(p.sp-(rsp-8)) == p.want && m.returnsTo(t, rsp, p.ret) {
		mp.tab.AddIndirect(p.site, i, 1)
	}
}

// returnsTo reports whether the return address at rsp, t's stack pointer
// at a function's entry, has ret as its low half: the entry was made by
// the pending call, not by another at the same depth.
func (m *mon) returnsTo(t *thread, rsp uint64, ret uint32) bool {
	w, ok := m.lowWord(t, rsp)
	return ok && w == ret
}

// lowWord returns the low half of the return address at addr in t's
// process: what the pending words compare.
func (m *mon) lowWord(t *thread, addr uint64) (uint32, bool) {
	var b [4]byte
	n, err := t.mm.mem.ReadMemory(addr, b[:])
	return binary.LittleEndian.Uint32(b[:]), err == nil && n == len(b)
}

// slabWords returns the offset of t's slab in its space's counter memory,
// false when t has none patchprof can read.
func slabWords(t *thread) (*counterMem, uint64, bool) {
	c := t.mm.ctr
	if c == nil || c.mem == nil || c.inherited || t.slab == 0 {
		return nil, 0, false
	}
	return c, uint64(t.slab-1) * c.slabSize, true
}

// takePend returns t's pending call and clears it: its slab's, else the
// one it recorded before its slab could hold it.
func (m *mon) takePend(t *thread) (pendCall, bool) {
	old := t.pend
	t.pend = pendCall{}
	c, base, ok := slabWords(t)
	if !ok {
		return old, old.mp != nil
	}
	w := loadCounter(c.mem, base+jump.PendWord)
	sp := loadCounter(c.mem, base+jump.PendSPWord)
	ret := uint32(loadCounter(c.mem, base+jump.PendRetWord))
	storeCounter(c.mem, base+jump.PendWord, 0)
	key := uint32(w)
	if key == 0 {
		return old, old.mp != nil
	}
	mp, i, ok := t.mm.siteOfCounter(jump.KeySite(uint64(key)))
	if !ok {
		return pendCall{}, false
	}
	return pendCall{mp: mp, site: i, want: uint32(w >> 32), sp: sp, ret: ret, tail: key&jump.TailKey != 0}, true
}

// setPend records p as t's pending call.
func (m *mon) setPend(t *thread, p pendCall) {
	c, base, ok := slabWords(t)
	if !ok || p.mp.jmp == nil || !p.mp.jmp.counted {
		t.pend = p
		return
	}
	storeCounter(c.mem, base+jump.PendSPWord, p.sp)
	storeCounter(c.mem, base+jump.PendRetWord, uint64(p.ret))
	key := uint64(p.mp.jmp.counterOf(p.site))
	if p.tail {
		key |= jump.TailKey
	}
	storeCounter(c.mem, base+jump.PendWord, uint64(p.want)<<32|key)
	t.pend = pendCall{}
}

// movePend puts the pending call t recorded before it had a slab into its
// new slab, where an entry's trampoline looks.
func (m *mon) movePend(t *thread) {
	if p := t.pend; p.mp != nil {
		m.setPend(t, p)
	}
}

// siteOfCounter returns the mapping and site whose counter is at slab
// offset off.
func (mm *space) siteOfCounter(off uint64) (*mapping, int, bool) {
	for _, mp := range mm.maps {
		j := mp.jmp
		if j == nil || !j.counted || off < j.ctrOff || off%8 != 0 {
			continue
		}
		if i := int((off - j.ctrOff) / 8); i < mp.tab.Len() {
			return mp, i, true
		}
	}
	return nil, 0, false
}

// foldCalls gives mp's table what its entries' call slots gained in every
// slab since the last fold: each slot's caller key is a block's counter,
// taken when it is mp's own (a call from another module stays among the
// callers unknown).
func (m *mon) foldCalls(mm *space, c *counterMem, mp *mapping) {
	j := mp.jmp
	tab := mp.tab
	entries := tab.CallEntries()
	if len(entries) == 0 {
		return
	}
	if j.callSeen == nil {
		j.callSeen = map[uint64]uint64{}
	}
	first := j.ctrOff + 8*uint64(tab.Len()+tab.ArcCounters())
	for k, e := range entries {
		base := first + uint64(k)*jump.CallSlotLen
		for s := 0; s < c.ever; s++ {
			at := uint64(s)*c.slabSize + base
			for q := 0; q < jump.CallSlots; q++ {
				key := loadCounter(c.mem, at+16*uint64(q))
				if key == 0 {
					break
				}
				n := loadCounter(c.mem, at+16*uint64(q)+8)
				d := n - j.callSeen[at+16*uint64(q)]
				if d == 0 {
					continue
				}
				j.callSeen[at+16*uint64(q)] = n
				if cm, ci, ok := mm.siteOfCounter(jump.KeySite(key)); ok && cm == mp {
					tab.AddIndirect(ci, e, d)
				}
			}
		}
	}
}

// callOverflow counts the call whose caller found every call slot of its
// callee's entry taken in t's slab (jump.CallSlots): the entry check
// stopped t at its int3 (jump.Trampoline.CallOverflow) with the caller's
// key in %eax. The call goes to its block as foldCalls gives the slots';
// a caller of another module stays among the callers unknown. t goes on
// after the int3, past the count. It reports false when pc is no such
// int3.
//
// Preconditions: on the tracer thread; t is stopped just after the int3
// at pc, with registers st.regs.
func (m *mon) callOverflow(t *thread, pc uint64, st *sigStop) bool {
	mp, i, tr := t.mm.trampolineAt(pc)
	if tr == nil || !tr.CallOverflow(pc+1) {
		return false
	}
	m.res.Traps++
	if cm, ci, ok := t.mm.siteOfCounter(jump.KeySite(st.regs.Rax & 0xffff_ffff)); ok && cm == mp {
		mp.tab.AddIndirect(ci, i, 1)
	}
	m.resume(t, 0)
	return true
}

// savedPend is a thread's pending call as a signal found it: its slab's
// words, or its own record before it had a slab.
type savedPend struct {
	word, sp, ret uint64
	own           pendCall
	cursors       []breakpoint.SetAside // the trap engines' pending calls, per cursor of t
}

// stashPend takes t's pending call (and, under the trap engines, its
// cursors') out of its way as it is sent into a signal handler: the handler's own indirect calls would overwrite it,
// and the call the signal interrupted would go among its callee's unknown
// callers. leaveHandler puts it back at the handler's rt_sigreturn; a
// handler left otherwise (siglongjmp) loses it, to the unknown callers.
func (m *mon) stashPend(t *thread) savedPend {
	s := savedPend{own: t.pend}
	t.pend = pendCall{}
	for k := range t.cursors {
		s.cursors = append(s.cursors, t.cursors[k].SetAside())
	}
	if c, base, ok := slabWords(t); ok {
		s.word = loadCounter(c.mem, base+jump.PendWord)
		s.sp = loadCounter(c.mem, base+jump.PendSPWord)
		s.ret = loadCounter(c.mem, base+jump.PendRetWord)
		storeCounter(c.mem, base+jump.PendWord, 0)
	}
	return s
}

// restorePend puts back the pending call stashPend took, as t returns
// from the handler to where the signal found it.
func (t *thread) restorePend(s savedPend) {
	if s.own.mp != nil {
		t.pend = s.own
	}
	for k, a := range s.cursors {
		if k < len(t.cursors) {
			t.cursors[k].PutBack(a)
		}
	}
	// A pending word the handler left (a call of its own into code not
	// counted) goes too: the word is as the signal found it.
	if c, base, ok := slabWords(t); ok {
		storeCounter(c.mem, base+jump.PendSPWord, s.sp)
		storeCounter(c.mem, base+jump.PendRetWord, s.ret)
		storeCounter(c.mem, base+jump.PendWord, s.word)
	}
}

// preemptSteps bounds the steps finishCall takes: a call's block is at
// most a few dozen instructions.
const preemptSteps = 64

// finishCall serves a goroutine that Go's asynchronous preemption (the
// SIGURG of stop st) finds between the start of a block that ends in an
// indirect call and the call: its call is pending in its thread's slab,
// and the handler may move the goroutine to another thread before the
// call, whose slab holds no pending call (the call would go among its
// callee's unknown callers). t is stepped on through the call to the
// callee's entry, where the monitor counts the call as the entry would
// (enteredBy; the entry then finds nothing pending), and the signal is
// delivered there. An asynchronous signal delivered a few instructions
// later is one that arrived later: nothing the program can tell apart.
//
// Preconditions: on the tracer thread; t is in the signal-delivery-stop
// st, out of any trampoline or slot.
func (m *mon) finishCall(t *thread, st *sigStop) {
	if st.sig != unix.SIGURG || t.mm.dead {
		return
	}
	p, ok := m.peekPend(t)
	if !ok || p.tail || !p.mp.tab.IsGo(p.site) {
		return
	}
	lo, hi := p.mp.tab.RuntimeAddr(p.site), p.mp.tab.PendRet(p.site)
	pc, err := peekUser(t.tid, offRip)
	if err != nil {
		return
	}
	if pc > lo && pc < hi {
		if pc, ok = m.stepThroughCall(t, st, pc, lo, hi); !ok {
			return
		}
	}
	// At a callee's entry (stepped there, or found there: the signal
	// came before the entry's jump to its check), the monitor counts the
	// call as the check would.
	mp, i, ok := t.mm.lookup(pc)
	if !ok {
		return // a callee not counted: the call stays pending, as it was
	}
	if e, ok := mp.tab.EntryAfter(i); ok {
		if rsp, err := peekUser(t.tid, offRsp); err == nil {
			m.enteredBy(t, mp, e, rsp)
		}
	}
}

// stepThroughCall steps t from pc, inside (lo, hi), the rest of a call's
// block, until it leaves it (the call made), and returns where it is; the
// signal of stop st stays to be delivered there. False when t is gone.
func (m *mon) stepThroughCall(t *thread, st *sigStop, pc, lo, hi uint64) (uint64, bool) {
	var err error
	var info siginfo
	have := getSiginfo(t.tid, &info) == nil
	pending := 0
	for steps := 0; steps < preemptSteps && pc > lo && pc < hi; steps++ {
		sig, ok := m.stepOnce(t, pc, "through its call")
		if sig != 0 {
			pending = sig
		}
		if !ok {
			return 0, false
		}
		if pc, err = peekUser(t.tid, offRip); err != nil {
			return 0, false
		}
	}
	m.resend(t, pending)
	if have {
		if err := setSiginfo(t.tid, &info); err != nil {
			m.lose(fmt.Errorf("restore the siginfo of signal %d for thread %d: %w", st.sig, t.tid, err))
		}
	}
	return pc, true
}

// peekPend returns t's pending call without clearing it: its slab's,
// else the one it recorded before its slab could hold it. Only the
// block's site and whether it is a tail jump are set.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) peekPend(t *thread) (pendCall, bool) {
	if c, base, ok := slabWords(t); ok {
		if key := uint32(loadCounter(c.mem, base+jump.PendWord)); key != 0 {
			mp, i, ok := t.mm.siteOfCounter(jump.KeySite(uint64(key)))
			return pendCall{mp: mp, site: i, tail: key&jump.TailKey != 0}, ok
		}
	}
	return t.pend, t.pend.mp != nil
}
