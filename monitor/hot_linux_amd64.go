//go:build linux && amd64

package monitor

// Functions patched ahead. Under the in-process engine a process's
// function takes its jump patches at its first hit, one trap each: a test
// suite that runs one program a hundred times (Jim Tcl's 82 jimsh, each
// trapping at 360 first hits) pays those traps in every process. The
// image remembers the functions any process of it ran (their first
// sites, in the order first hit), and a process's first hit in the image
// patches all of them at once, in the same stage, while its threads are
// stopped as they are for any first hit: later processes trap at the
// functions no earlier one ran. A function patched ahead and never run
// costs its trampolines, nothing else; its counts are the same, counted
// in the target instead of at a trap.

// markHot records that a process ran the function whose first site is lo.
func (img *Image) markHot(lo int) {
	if img.hotSeen == nil {
		img.hotSeen = map[int]bool{}
	}
	if !img.hotSeen[lo] {
		img.hotSeen[lo] = true
		img.hot = append(img.hot, lo)
	}
}

// jumpHot follows tryJump's patch of site i's function: it records the
// function in mp's image and, at the mapping's first hit, patches the
// functions earlier processes of the image ran (jumpRange, as an eager
// attach does), reading each stopped thread's PC once.
//
// Preconditions: as for jumpSite; every thread of t's process is stopped,
// the stage held.
func (m *mon) jumpHot(t *thread, mp *mapping, i int) {
	tab, img, mm := mp.tab, mp.Image, t.mm
	if img == nil || tab.Func(i) < 0 {
		return
	}
	lo, _ := tab.FuncSites(i)
	ahead := !mp.hotDone
	mp.hotDone = true
	if ahead && len(img.hot) > 0 {
		mm.pcs = map[int]uint64{}
		for _, k := range img.hot {
			if mm.noJump {
				break
			}
			if k == lo || !m.untriedFunc(mp, k) {
				continue
			}
			_, hi := tab.FuncSites(k)
			m.jumpRange(t, mp, k, hi)
			m.res.JumpAhead++
		}
		mm.pcs = nil
	}
	img.markHot(lo)
}

// untriedFunc reports whether a site of the function whose first site is
// lo still wants a patch, and none is a gate (a Notify or Resume site,
// which keep their own ways of being patched).
func (m *mon) untriedFunc(mp *mapping, lo int) bool {
	tab := mp.tab
	_, hi := tab.FuncSites(lo)
	wanted := false
	for k := lo; k < hi; k++ {
		if tab.IsNotify(k) || tab.IsResume(k) {
			return false
		}
		wanted = wanted || m.jumpWanted(mp, k)
	}
	return wanted
}
