package main

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/patchprof/patchprof/profile"
)

// Counts are the line and function counts of a saved profile, keyed by
// what they count, so that profiles of the same executable under different
// engines compare: a line by module, file and number, a function by module
// and address. The keys read as "file:line" and "function (address)",
// prefixed by the module's base name when not the executable.
type Counts struct {
	Lines, Funcs map[string]uint64
}

// countsOf takes the counts out of a profile.
func countsOf(p *profile.Profile) Counts {
	c := Counts{Lines: make(map[string]uint64), Funcs: make(map[string]uint64)}
	for _, l := range p.Lines {
		c.Lines[inModule(l.Module, fmt.Sprintf("%s:%d", filepath.Base(l.File), l.Line))] += l.Count
	}
	for _, f := range p.Functions {
		c.Funcs[inModule(f.Module, fmt.Sprintf("%s (%s)", f.Name, f.Address))] += f.Count
	}
	return c
}

// inModule prefixes a key with its module's base name, for the modules
// other than the executable.
func inModule(module, key string) string {
	if module == "" {
		return key
	}
	return filepath.Base(module) + ": " + key
}

// siteHits is the number of events a profile counted: the sum of its sites'
// counts (under a trap engine, one trap each).
func siteHits(p *profile.Profile) uint64 {
	var n uint64
	for _, s := range p.Sites {
		n += s.Count
	}
	return n
}

// diffCounts lists the lines and functions whose counts differ between two
// profiles' counts, or that only one has, sorted, at most max of them; the
// second result is how many differ in all.
func diffCounts(want, got Counts, max int) ([]string, int) {
	var diffs []string
	cmp := func(kind string, w, g map[string]uint64) {
		for k, wc := range w {
			if gc, ok := g[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s %s: %d, missing", kind, k, wc))
			} else if gc != wc {
				diffs = append(diffs, fmt.Sprintf("%s %s: %d, now %d", kind, k, wc, gc))
			}
		}
		for k, gc := range g {
			if _, ok := w[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s %s: missing, now %d", kind, k, gc))
			}
		}
	}
	cmp("line", want.Lines, got.Lines)
	cmp("function", want.Funcs, got.Funcs)
	sort.Strings(diffs)
	n := len(diffs)
	if len(diffs) > max {
		diffs = diffs[:max]
	}
	return diffs, n
}

// sum adds up counts.
func sum(m map[string]uint64) uint64 {
	var n uint64
	for _, c := range m {
		n += c
	}
	return n
}
