package profiler

import (
	"fmt"
	"sort"
	"strings"

	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/profile"
)

// jumpNotes says how the in-process engine served the run: how many sites
// it planned and patched, and why the others kept a breakpoint (planned
// at startup, or refused at run time). Nothing for the other engines.
func (p *Profiler) jumpNotes(res *monitor.Result) []string {
	if !p.sel.jump {
		return nil
	}
	planned, derived, unplanned := 0, 0, 0
	reasons := map[string]int{}
	traps := map[string]uint64{} // the hits of the sites kept for each reason
	for _, m := range append([]*module{p.root}, p.sel.mods...) {
		if !m.counted {
			continue
		}
		planned += m.jumps.Sites
		derived += m.jumps.Derived
		for r, n := range m.jumps.Reasons {
			reasons[r] += n
		}
		if m.plan == nil {
			continue
		}
		t := m.plan.Table
		lp, lk, lu, ld, _ := t.LazyJumps()
		planned += lp
		unplanned += lu
		derived += ld
		for r, n := range lk {
			reasons[r] += n
		}
		c := countsOf(res, m)
		for i := 0; i < t.Len(); i++ {
			if r := t.KeptReason(i); r != "" {
				traps[r] += c.Hits[i]
			}
		}
	}
	for r, n := range res.JumpRefused {
		reasons["at run time: "+r] += n
	}
	notes := []string{fmt.Sprintf(profile.EngineNotePrefix+"%d sites can count in the target, %d were patched, each with its function at its first hit (each process counted apart); %d block counts follow from the others' (not planted); the others trap, served out of line (%d traps in all)", planned, res.JumpSites, derived, res.Traps)}
	if unplanned > 0 {
		notes = append(notes, fmt.Sprintf(profile.EngineNotePrefix+"%d functions were not planned: their patches are planned at the function's first hit, and they never ran", unplanned))
	}
	if res.JumpAhead > 0 {
		notes = append(notes, fmt.Sprintf(profile.EngineNotePrefix+"%d functions were patched ahead, at a process's first hit in their program, because an earlier process of it ran them", res.JumpAhead))
	}
	if res.JumpMoved > 0 {
		notes = append(notes, fmt.Sprintf(profile.EngineNotePrefix+"%d trampolines were moved from an earlier process of their program, not built again", res.JumpMoved))
	}
	if res.AttachPause > 0 {
		notes = append(notes, fmt.Sprintf(profile.EngineNotePrefix+"the attached process was stopped %.1f ms for the attach (its threads seized, its sites planted and patched)", float64(res.AttachPause.Microseconds())/1000))
	}
	if len(reasons) > 0 {
		keys := make([]string, 0, len(reasons))
		for r := range reasons {
			keys = append(keys, r)
		}
		sort.Slice(keys, func(i, j int) bool {
			if reasons[keys[i]] != reasons[keys[j]] {
				return reasons[keys[i]] > reasons[keys[j]]
			}
			return keys[i] < keys[j]
		})
		var b strings.Builder
		for k, r := range keys {
			if k > 0 {
				b.WriteString("; ")
			}
			if n, ok := traps[r]; ok {
				fmt.Fprintf(&b, "%d (%d traps): %s", reasons[r], n, r)
			} else {
				fmt.Fprintf(&b, "%d: %s", reasons[r], r)
			}
		}
		notes = append(notes, profile.EngineNotePrefix+"sites that keep a breakpoint, by reason: "+b.String())
	}
	return notes
}
