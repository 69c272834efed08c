package output

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// The callgrind events WriteCallgrind writes.
const (
	// CallgrindLineEvent is each line's executions (its count), the
	// self cost of a profile that counted lines.
	CallgrindLineEvent = "Ex"
	// CallgrindEntryEvent is each function's entries, put on its first
	// line, the self cost of a profile that counted only functions.
	CallgrindEntryEvent = "Entries"
	// CallgrindTimeEvent is the CPU time sampled in each line (--time),
	// in nanoseconds.
	CallgrindTimeEvent = "ns"
)

// WriteCallgrind writes p as a callgrind profile (the format of valgrind's
// callgrind.out files, "Callgrind Format Specification" in the valgrind
// manual), which callgrind_annotate, KCachegrind and qcachegrind read:
// each function (fn=, in its object ob= and file fl=) with its lines'
// counts as the self cost, and the call arcs it makes (cfn=, calls=) at
// their call sites' lines. Positions are source lines. An arc's inclusive
// cost is the time sampled under it (--time: the samples whose call chain
// holds the call, arcInclusive) and 0 for the counts: patchprof counts
// calls, not the lines each call ran. Arcs
// without a known callee (calls through a pointer whose targets are not
// known) and the calls of unknown callers are not written: the format has no place for them.
// The output depends only on p.
func WriteCallgrind(w io.Writer, p *profile.Profile) error {
	if p == nil {
		return ErrNilProfile
	}
	bw := bufio.NewWriter(w)
	c := callgrind{p: p, w: bw, time: p.HasTime(), lines: p.HasLines()}
	c.write()
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write callgrind profile: %w", err)
	}
	return nil
}

// callgrind writes one profile in callgrind's format.
type callgrind struct {
	p     *profile.Profile
	w     *bufio.Writer
	time  bool // a second event: sampled time
	lines bool // self cost: line counts (else function entries)
	entry map[funcID]*profile.Function
	// incl is each arc's inclusive sampled time (arcInclusive).
	incl map[inclKey]uint64
}

// A cgFunc is one function of the output: its entry (nil for a caller
// the profile has no entry count of), its lines and the arcs it makes.
type cgFunc struct {
	module, name string
	f            *profile.Function
	lines        []profile.Line
	arcs         []profile.Arc
}

func (c *callgrind) write() {
	p, w := c.p, c.w
	event := CallgrindEntryEvent
	if c.lines {
		event = CallgrindLineEvent
	}
	events := event
	if c.time {
		events += " " + CallgrindTimeEvent
	}
	fmt.Fprintf(w, "# callgrind format\nversion: 1\ncreator: patchprof\n")
	fmt.Fprintf(w, "cmd: %s\n", oneLine(strings.Join(p.Args, " ")))
	fmt.Fprintf(w, "positions: line\nevents: %s\n", events)
	// No "event:" descriptions: callgrind_annotate 3.19 calls them
	// malformed.
	funcs := c.functions()
	if c.time {
		c.incl = arcInclusive(p)
	}
	var total, totalNS uint64
	for _, f := range funcs {
		for _, l := range f.lines {
			total, totalNS = profile.SumCounts(total, l.Count), profile.SumCounts(totalNS, l.TimeNS)
		}
		if !c.lines && f.f != nil {
			total, totalNS = profile.SumCounts(total, f.f.Count), profile.SumCounts(totalNS, f.f.TimeNS)
		}
	}
	fmt.Fprintf(w, "summary: %d%s\n", total, c.timeCost(totalNS))
	for _, f := range funcs {
		c.function(f)
	}
}

// functions returns the functions to write, by module and address (the
// callers without an entry count last, by name), each with its lines and
// arcs.
func (c *callgrind) functions() []*cgFunc {
	p := c.p
	type key struct{ module, name string }
	byKey := map[key]*cgFunc{}
	var out []*cgFunc
	get := func(module, name string) *cgFunc {
		k := key{module, name}
		if f := byKey[k]; f != nil {
			return f
		}
		f := &cgFunc{module: module, name: name}
		byKey[k] = f
		out = append(out, f)
		return f
	}
	for i := range p.Functions {
		f := &p.Functions[i]
		if g := get(f.Module, f.Name); g.f == nil {
			g.f = f
		}
	}
	for _, l := range p.Lines {
		if l.Function != "" {
			g := get(l.Module, l.Function)
			g.lines = append(g.lines, l)
		}
	}
	for _, a := range p.Arcs {
		if a.Kind != profile.ArcUnknown && a.Callee != "" {
			g := get(a.Module, a.Caller)
			g.arcs = append(g.arcs, a)
		}
	}
	slices.SortStableFunc(out, func(a, b *cgFunc) int {
		if (a.f == nil) != (b.f == nil) {
			return map[bool]int{true: 1, false: -1}[a.f == nil]
		}
		if a.f != nil {
			return cmp.Or(strings.Compare(a.module, b.module), cmp.Compare(a.f.Address, b.f.Address), strings.Compare(a.name, b.name))
		}
		return cmp.Or(strings.Compare(a.module, b.module), strings.Compare(a.name, b.name))
	})
	return out
}

// timeCost is the time column of a cost line (with --time), " NS".
func (c *callgrind) timeCost(ns uint64) string {
	if !c.time {
		return ""
	}
	return " " + strconv.FormatUint(ns, 10)
}

// function writes one function: its object, file and name, its lines'
// costs, then its calls.
func (c *callgrind) function(f *cgFunc) {
	w := c.w
	file := ""
	switch {
	case f.f != nil && f.f.File != "":
		file = f.f.File
	case len(f.lines) > 0:
		file = f.lines[0].File
	case len(f.arcs) > 0:
		file = f.arcs[0].File
	}
	fmt.Fprintf(w, "\nob=%s\nfl=%s\nfn=%s\n", oneLine(c.p.ModuleName(f.module)), cgFile(file), oneLine(f.name))
	cur := file
	for _, l := range f.lines {
		if l.File != cur {
			fmt.Fprintf(w, "fi=%s\n", cgFile(l.File))
			cur = l.File
		}
		fmt.Fprintf(w, "%d %d%s\n", l.Line, l.Count, c.timeCost(l.TimeNS))
	}
	if !c.lines && f.f != nil {
		fmt.Fprintf(w, "%d %d%s\n", f.f.Line, f.f.Count, c.timeCost(f.f.TimeNS))
	}
	for _, a := range f.arcs {
		if a.File != "" && a.File != cur {
			fmt.Fprintf(w, "fi=%s\n", cgFile(a.File))
			cur = a.File
		}
		// Every call names its callee's object and file: whether a
		// reader carries the last cob= and cfi= over to the next call
		// is not the same in every reader.
		callee := c.callee(a)
		obj, cfile, line := c.p.ModuleName(a.CalleeModule), "", 0
		if a.Outside {
			obj = "???"
		}
		if callee != nil {
			cfile, line = callee.File, callee.Line
		}
		fmt.Fprintf(w, "cob=%s\ncfi=%s\n", oneLine(obj), cgFile(cfile))
		fmt.Fprintf(w, "cfn=%s\ncalls=%d %d\n%d 0%s\n", oneLine(a.Callee), a.Count, line, a.Line, c.timeCost(c.incl[inclKey{a.Module, a.Site, a.Callee}]))
	}
}

// An inclKey is an arc as the sampled chains find it: its call site and
// callee.
type inclKey struct {
	module string
	site   profile.Address
	callee string
}

// arcInclusive returns the time sampled under each arc of p: for every
// sampled chain (p.Stacks), each caller frame's call (the arc whose site
// holds the frame's address, a return address less one) to the callee
// the frame within it is in, or to the one callee outside the counted
// modules the site has (a qsort that called back in), charged the
// chain's time once however often the chain holds it (recursion).
func arcInclusive(p *profile.Profile) map[inclKey]uint64 {
	if len(p.Stacks) == 0 {
		return nil
	}
	type siteKey struct {
		module string
		site   profile.Address
	}
	sites := map[string][]profile.Address{} // by module, sorted
	arcs := map[siteKey][]profile.Arc{}
	for _, a := range p.Arcs {
		if a.Kind == profile.ArcUnknown || a.Callee == "" {
			continue
		}
		k := siteKey{a.Module, a.Site}
		if len(arcs[k]) == 0 {
			sites[a.Module] = append(sites[a.Module], a.Site)
		}
		arcs[k] = append(arcs[k], a)
	}
	for _, s := range sites {
		slices.Sort(s)
	}
	// maxCall is the longest x86-64 instruction: a return address less
	// one lies within its call.
	const maxCall = 15
	out := map[inclKey]uint64{}
	seen := map[inclKey]bool{}
	for _, st := range p.Stacks {
		clear(seen)
		for i := 1; i < len(st.Frames); i++ {
			f, in := st.Frames[i], st.Frames[i-1]
			s := sites[f.Module]
			j, _ := slices.BinarySearch(s, f.Address+1)
			if j == 0 || f.Address-s[j-1] >= maxCall {
				continue
			}
			cands := arcs[siteKey{f.Module, s[j-1]}]
			var pick *profile.Arc
			for k := range cands {
				if cands[k].Callee == in.Function && !cands[k].Outside {
					pick = &cands[k]
				}
			}
			if pick == nil && len(cands) == 1 && cands[0].Outside {
				pick = &cands[0]
			}
			if pick == nil {
				continue
			}
			k := inclKey{pick.Module, pick.Site, pick.Callee}
			if !seen[k] {
				seen[k] = true
				out[k] += st.TimeNS
			}
		}
	}
	return out
}

// callee returns the counted function arc a calls; nil when it is not
// counted.
func (c *callgrind) callee(a profile.Arc) *profile.Function {
	if a.Outside {
		return nil
	}
	if c.entry == nil {
		c.entry = make(map[funcID]*profile.Function, len(c.p.Functions))
		for i := range c.p.Functions {
			f := &c.p.Functions[i]
			c.entry[funcID{f.Module, f.Address}] = f
		}
	}
	return c.entry[funcID{a.CalleeModule, a.CalleeAddress}]
}

// cgFile is a file name for fl=, fi= and cfi=: "???" when unknown, as
// callgrind writes it.
func cgFile(file string) string {
	if file == "" {
		return "???"
	}
	return oneLine(file)
}

// oneLine keeps a name on its line of the format: a newline in a path or
// argument would start a new specification line.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}
