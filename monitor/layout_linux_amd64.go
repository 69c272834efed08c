//go:build linux && amd64

package monitor

// notifyLayout reports mm's code to Options.Layout, after the monitor
// changed what it knows of it: images planted or forgotten (start, the
// dynamic linker's notification, exec), a fork's copy, a scratch region
// mapped.
//
// Preconditions: on the tracer thread; no thread of mm runs, so every
// sample taken before the call belongs to the former layout.
func (m *mon) notifyLayout(mm *space) {
	if m.o.Layout == nil {
		return
	}
	l := Layout{PID: mm.tgid, Maps: mm.snapshot()}
	for _, mp := range mm.maps {
		if j := mp.jmp; j != nil && j.base != 0 {
			// A trampoline counts and runs its site's displaced
			// instructions: its time is the site's (the first of them).
			// The slots' owners are read with atomic loads: trampolines
			// are added while the profiler reads (siteAt).
			tab := mp.tab
			l.Scratch = append(l.Scratch, Scratch{
				Lo: j.base, Hi: j.base + j.size,
				Original: func(pc uint64) uint64 {
					i, _, ok := j.siteAt(pc)
					if !ok || i >= tab.Len() {
						return pc
					}
					return tab.RuntimeAddr(i)
				},
				Pushed: func(pc uint64) uint64 {
					i, at, ok := j.siteAt(pc)
					if !ok || i >= tab.Len() {
						return 0
					}
					return tab.Prologue(i).Pushed(int(pc - at))
				},
			})
		}
		if mp.xol == nil {
			continue
		}
		// A slot runs its site's instruction (then a jump back): all of
		// it is the site's time. The table view and the base are fixed for
		// the life of the region.
		base, tab, n := mp.xol.base, mp.tab, mp.tab.Len()
		l.Scratch = append(l.Scratch, Scratch{
			Lo: base, Hi: base + mp.xol.size,
			Original: func(pc uint64) uint64 {
				i := int((pc - base) / slotStride)
				if i >= n {
					return pc // the padding after the last slot
				}
				return tab.RuntimeAddr(i)
			},
		})
	}
	m.o.Layout(l)
}
