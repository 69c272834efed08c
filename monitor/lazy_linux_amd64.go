//go:build linux && amd64

package monitor

import "fmt"

// Functions planned at their first hit (breakpoint's PlanOptions.LazyFuncs).
//
// The start plants every site of such a function, those whose counts will
// be derived too: which they are is known once the function is planned, at
// its first hit. The first time a process traps in the function (or has
// it patched ahead, jumpRange), their original bytes go back in that
// process, as if they had never been planted; every other site of the
// function is then served as any other. A fork child has its parent's
// copy of the code, and the parent's record of it (mapping.lazyDone).

// settleLazy readies site i's function in t's process if its plan was
// left for its first hit: planned, and its derived sites' bytes put back
// with the other threads held. It reports whether site i is itself
// derived, when a thread trapped there before its bytes went back: the
// thread is sent to the site's own instruction, its hit uncounted (the
// site's count follows from the others'), once the byte is back.
//
// Preconditions: t is stopped at its trap at site i.
func (m *mon) settleLazy(t *thread, mp *mapping, i int) bool {
	if !mp.tab.LazyFunc(i) {
		return false
	}
	if !mp.lazyDone[mp.tab.Func(i)] {
		if derived := mp.tab.DerivedOf(i); len(derived) == 0 {
			m.lose(mp.putBack(t.mm, i, nil)) // nothing to put back: no thread held
		} else {
			m.stopOthers(t.mm, t)
			m.lose(mp.putBack(t.mm, i, derived))
			m.resumeOthers(t.mm, t)
		}
	}
	if !mp.tab.Derived(i) {
		return false
	}
	// Its byte is put back again first, so that the thread cannot trap
	// there for ever should the put-back above have failed.
	if err := mp.tab.DisarmIn(mp.memIn(t.mm), i); err != nil {
		m.lose(fmt.Errorf("put back the code at %#x in process %d: %w", mp.tab.RuntimeAddr(i), t.mm.tgid, err))
	}
	if err := pokeUser(t.tid, offRip, mp.tab.RuntimeAddr(i)); err != nil {
		m.lose(fmt.Errorf("move thread %d back to %#x: %w", t.tid, mp.tab.RuntimeAddr(i), err))
		return true
	}
	m.resume(t, 0)
	return true
}

// disarmDerived plans site i's function if its plan was left for its
// first hit and puts its derived sites' original bytes back in mm, once
// per function and space.
//
// Preconditions: every thread of mm is stopped.
func (m *mon) disarmDerived(mm *space, mp *mapping, i int) {
	if mp.tab.LazyFunc(i) && !mp.lazyDone[mp.tab.Func(i)] {
		m.lose(mp.putBack(mm, i, mp.tab.DerivedOf(i)))
	}
}

// putBack records that site i's function has its derived sites' bytes
// back in mm, and puts back those of derived.
func (mp *mapping) putBack(mm *space, i int, derived []int) error {
	if mp.lazyDone == nil {
		mp.lazyDone = map[int32]bool{}
	}
	mp.lazyDone[mp.tab.Func(i)] = true
	mem := mp.memIn(mm)
	for _, k := range derived {
		if err := mp.tab.DisarmIn(mem, k); err != nil {
			return fmt.Errorf("put back the code at %#x in process %d: %w", mp.tab.RuntimeAddr(k), mm.tgid, err)
		}
	}
	return nil
}
