package serve

import "github.com/patchprof/patchprof/profile"

// Delta returns the counts cur added since old, two profiles of the same run
// taken in that order: cur's entries, each count less the count of the same
// entry in old (an entry old lacks, of a library loaded since, keeps its
// count). Counts only grow during a run; a count that shrank (profiles of
// two runs) is clamped at 0. Neither profile is changed.
func Delta(old, cur *profile.Profile) *profile.Profile {
	d := cur.Clone()
	type fkey struct {
		module, name string
		addr         profile.Address
	}
	type lkey struct {
		module, file string
		line         int
	}
	type akey struct {
		module string
		addr   profile.Address
	}
	type ekey struct {
		module, kind string
		from, to     profile.Address
	}
	subtract(d.Functions, old.Functions, func(f *profile.Function) fkey { return fkey{f.Module, f.Name, f.Address} },
		func(f *profile.Function) []*uint64 { return []*uint64{&f.Count, &f.Returns, &f.Samples, &f.TimeNS} })
	subtract(d.Lines, old.Lines, func(l *profile.Line) lkey { return lkey{l.Module, l.File, l.Line} },
		func(l *profile.Line) []*uint64 { return []*uint64{&l.Count, &l.Samples, &l.TimeNS} })
	subtract(d.Sites, old.Sites, func(s *profile.Site) akey { return akey{s.Module, s.Address} },
		func(s *profile.Site) []*uint64 { return []*uint64{&s.Count} })
	subtract(d.Blocks, old.Blocks, func(b *profile.Block) akey { return akey{b.Module, b.Address} },
		func(b *profile.Block) []*uint64 { return []*uint64{&b.Count, &b.Entries, &b.Samples, &b.TimeNS} })
	subtract(d.Edges, old.Edges, func(e *profile.Edge) ekey { return ekey{e.Module, e.Kind, e.From, e.To} },
		func(e *profile.Edge) []*uint64 { return []*uint64{&e.Count} })
	subtract(d.Branches, old.Branches, func(b *profile.Branch) akey { return akey{b.Module, b.Address} },
		func(b *profile.Branch) []*uint64 { return []*uint64{&b.Taken, &b.NotTaken} })
	subtract(d.Calls, old.Calls, func(c *profile.Call) akey { return akey{c.Module, c.Address} },
		func(c *profile.Call) []*uint64 { return []*uint64{&c.Count, &c.Returned} })
	// The call graph (--calls), by site and callee: an unknown arc's
	// difference is the calls no counted site made in the window.
	type arcKey struct {
		module, kind, calleeModule, callee string
		site, calleeAddr                   profile.Address
	}
	subtract(d.Arcs, old.Arcs, func(a *profile.Arc) arcKey {
		return arcKey{a.Module, a.Kind, a.CalleeModule, a.Callee, a.Site, a.CalleeAddress}
	}, func(a *profile.Arc) []*uint64 { return []*uint64{&a.Count} })
	// The sampled time (--time), by address and in all.
	subtract(d.Samples, old.Samples, func(s *profile.Sample) akey { return akey{s.Module, s.Address} },
		func(s *profile.Sample) []*uint64 { return []*uint64{&s.Samples, &s.TimeNS} })
	if d.Time != nil && old.Time != nil {
		t, o := d.Time, old.Time
		subtract([]*profile.Time{t}, []*profile.Time{o}, func(**profile.Time) bool { return true },
			func(x **profile.Time) []*uint64 {
				return []*uint64{&(*x).Samples, &(*x).TimeNS, &(*x).Outside, &(*x).OutsideNS, &(*x).Lost}
			})
	}
	return d
}

// subtract takes from each entry of cur the counts of the entry of old with
// the same key.
func subtract[T any, K comparable](cur, old []T, key func(*T) K, counts func(*T) []*uint64) {
	before := make(map[K][]*uint64, len(old))
	for i := range old {
		before[key(&old[i])] = counts(&old[i])
	}
	for i := range cur {
		o, ok := before[key(&cur[i])]
		if !ok {
			continue
		}
		for j, c := range counts(&cur[i]) {
			if *c >= *o[j] {
				*c -= *o[j]
			} else {
				*c = 0
			}
		}
	}
}
