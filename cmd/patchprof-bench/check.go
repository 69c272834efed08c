package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// A countChecker compares the counts of every profile a workload's engines
// saved with the first one's, and keeps what went wrong in its runs.
type countChecker struct {
	ref     Counts
	refFrom string
	// hits is the number of events of the workload: siteHits of the first
	// xol profile, else of the first profile.
	hits     uint64
	hitsFrom string
	// profiles and differing count each engine's profiles, and those whose
	// counts differ from the reference; diffs lists the differences of
	// each engine's first differing profile.
	profiles, differing map[string]int
	diffs               map[string][]string
	problems            []string
	// varies, when set, says why the workload's counts differ from run
	// to run (a test suite that draws random numbers): its profiles are
	// then not compared.
	varies string
}

// maxDiffs is how many differences of one engine the report shows.
const maxDiffs = 12

// add checks one profile that engine saved.
func (c *countChecker) add(engine string, p *profile.Profile) {
	if c.profiles == nil {
		c.profiles, c.differing, c.diffs = make(map[string]int), make(map[string]int), make(map[string][]string)
	}
	c.profiles[engine]++
	if c.hitsFrom == "" || (engine == cfgXOL && c.hitsFrom != cfgXOL) {
		c.hits, c.hitsFrom = siteHits(p), engine
	}
	got := countsOf(p)
	if c.refFrom == "" || c.varies != "" {
		if c.refFrom == "" {
			c.ref, c.refFrom = got, engine
		}
		return
	}
	diffs, n := diffCounts(c.ref, got, maxDiffs)
	if n == 0 {
		return
	}
	c.differing[engine]++
	if c.differing[engine] == 1 {
		c.diffs[engine] = append([]string{fmt.Sprintf("%d of %d lines and functions differ; the first %d:", n,
			len(c.ref.Lines)+len(c.ref.Funcs), len(diffs))}, diffs...)
	}
}

// problem records a run that failed or printed something else.
func (c *countChecker) problem(msg string) {
	c.problems = append(c.problems, msg)
}

// verdict says in one line whether the engines' counts agree, followed by
// the differences when they do not; ok is false when anything went wrong.
func (c *countChecker) verdict(workload string) (text string, ok bool) {
	var b strings.Builder
	engines := make([]string, 0, len(c.profiles))
	for e := range c.profiles {
		engines = append(engines, e)
	}
	sort.Slice(engines, func(i, j int) bool { return engineOrder(engines[i]) < engineOrder(engines[j]) })
	var runs []string
	for _, e := range engines {
		runs = append(runs, fmt.Sprintf("%s %d", e, c.profiles[e]))
	}
	what := fmt.Sprintf("%s lines (%s entries) and %s functions (%s calls)",
		thousands(int64(len(c.ref.Lines))), thousands(int64(sum(c.ref.Lines))),
		thousands(int64(len(c.ref.Funcs))), thousands(int64(sum(c.ref.Funcs))))
	ok = len(c.problems) == 0
	switch {
	case len(c.profiles) == 0:
		fmt.Fprintf(&b, "%s: no engine ran: counts not checked\n", workload)
	case c.varies != "":
		fmt.Fprintf(&b, "%s: counts not compared between runs (%s), which %s: %s\n",
			workload, strings.Join(runs, ", "), c.varies, what)
	case len(c.differing) == 0:
		fmt.Fprintf(&b, "%s: counts agree: every saved profile (%s) has the first one's (%s) %s\n",
			workload, strings.Join(runs, ", "), c.refFrom, what)
	default:
		ok = false
		fmt.Fprintf(&b, "%s: COUNTS DIFFER between engines: profiles compared with the first one (%s: %s)\n", workload, c.refFrom, what)
		for _, e := range engines {
			if c.differing[e] == 0 {
				continue
			}
			fmt.Fprintf(&b, "  %s: %d of %d profiles differ; %s\n", e, c.differing[e], c.profiles[e], c.diffs[e][0])
			for _, d := range c.diffs[e][1:] {
				fmt.Fprintf(&b, "    %s\n", d)
			}
		}
	}
	for _, p := range c.problems {
		fmt.Fprintf(&b, "%s: RUN FAILED OR MISBEHAVED: %s\n", workload, strings.ReplaceAll(strings.TrimSpace(p), "\n", "\n    "))
	}
	return b.String(), ok
}

// engineOrder is an engine's place in the table.
func engineOrder(e string) int {
	for i, c := range allConfigs {
		if c == e {
			return i
		}
	}
	return len(allConfigs)
}
