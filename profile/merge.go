package profile

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// ErrMismatch is returned by Merge for profiles of different executables.
var ErrMismatch = errors.New("profiles of different executables")

// Merge sums profiles of one executable, as Bishop kept raw files so that runs
// could be combined: line, function and site counts are added by file and
// line, by function address and by site address, an instance's line counts
// by its address and line, call arcs by site and callee (the unknown
// callers of each function recomputed from the sums). Profiles match when their
// build IDs are equal (or, without build IDs, their executable paths); force
// merges anyway. The result's mode covers what any input counted; its exit is
// the last input's.
//
// A sum that would pass 2^64-1 stays at 2^64-1 (saturates) rather than wrap
// around to a small number, and a note of the result says how many counts
// were capped: they are then lower bounds. Wrapping would turn the hottest
// line into a cold one; refusing would lose every other count.
func Merge(force bool, ps ...*Profile) (*Profile, error) {
	if len(ps) == 0 {
		return nil, errors.New("nothing to merge")
	}
	first := ps[0]
	m := newMerger(first)
	for k, p := range ps {
		if !force && !sameExecutable(first, p) {
			return nil, fmt.Errorf("%w: %s (build ID %q) and %s (build ID %q): use --force to merge anyway",
				ErrMismatch, first.Executable, first.BuildID, p.Executable, p.BuildID)
		}
		m.add(p)
		if k == len(ps)-1 {
			m.out.Exit = p.Exit
		}
	}
	out := m.out
	switch {
	case m.hasLines && m.hasFuncs:
		out.Mode = ModeLinesFuncs
	case m.hasFuncs:
		out.Mode = ModeFuncs
	default:
		out.Mode = ModeLines
	}
	m.bm.finish(out)
	out.SetUnknownArcs()
	if len(ps) > 1 {
		out.Notes = append(out.Notes, fmt.Sprintf("merged from %d profiles", len(ps)))
	}
	if capped := m.sat.capped; capped == 1 {
		out.Notes = append(out.Notes, fmt.Sprintf("1 merged count passed 2^64-1 and was capped at %d: it is a lower bound", uint64(math.MaxUint64)))
	} else if capped > 1 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d merged counts passed 2^64-1 and were capped at %d: they are lower bounds", capped, uint64(math.MaxUint64)))
	}
	out.Sort()
	return out, nil
}

// A merger is the sum of the profiles Merge has added so far: the result,
// and where each of its entries is, by key.
type merger struct {
	out      *Profile
	lines    map[lineKey]int
	funcs    map[modAddr]int
	sites    map[modAddr]int
	samples  map[modAddr]int
	insts    map[modAddr]int
	arcs     map[arcKey]int
	dropped  map[modAddr]bool
	sources  map[[2]string]bool // module, file
	modules  map[string]bool
	notes    map[string]bool
	hasLines bool
	hasFuncs bool
	sat      saturator
	bm       blockMerger
}

// A lineKey is a line of a source file of a module.
type lineKey struct {
	module, file string
	line         int
}

// newMerger returns an empty merger for profiles like first.
func newMerger(first *Profile) *merger {
	m := &merger{
		out: &Profile{
			Version: Version, Executable: first.Executable, BuildID: first.BuildID, Args: first.Args,
			Lines: []Line{}, Functions: []Function{}, Sites: []Site{},
		},
		lines:   map[lineKey]int{},
		funcs:   map[modAddr]int{},
		sites:   map[modAddr]int{},
		samples: map[modAddr]int{},
		insts:   map[modAddr]int{},
		arcs:    map[arcKey]int{},
		dropped: map[modAddr]bool{},
		sources: map[[2]string]bool{},
		modules: map[string]bool{},
		notes:   map[string]bool{},
	}
	m.bm = blockMerger{sat: &m.sat}
	return m
}

// add adds the counts and lists of p to m.
func (m *merger) add(p *Profile) {
	out, sat := m.out, &m.sat
	m.hasLines = m.hasLines || p.HasLines()
	m.hasFuncs = m.hasFuncs || p.HasFuncs()
	for _, l := range p.Lines {
		key := lineKey{l.Module, l.File, l.Line}
		if i, ok := m.lines[key]; ok {
			sat.add(&out.Lines[i].Count, l.Count)
			sat.add(&out.Lines[i].Samples, l.Samples)
			sat.add(&out.Lines[i].TimeNS, l.TimeNS)
			continue
		}
		m.lines[key] = len(out.Lines)
		out.Lines = append(out.Lines, l)
	}
	m.addFunctions(p.Functions)
	for _, s := range p.Sites {
		key := modAddr{s.Module, s.Address}
		if i, ok := m.sites[key]; ok {
			sat.add(&out.Sites[i].Count, s.Count)
			out.Sites[i].Kind = UnionKind(out.Sites[i].Kind, s.Kind)
			continue
		}
		m.sites[key] = len(out.Sites)
		out.Sites = append(out.Sites, s)
	}
	m.bm.add(out, p)
	mergeTime(out, p, m.samples, sat)
	mergeInstances(out, p, m.insts, sat)
	mergeArcs(out, p, m.arcs, sat)
	for _, d := range p.Dropped {
		if key := (modAddr{d.Module, d.Address}); !m.dropped[key] {
			m.dropped[key] = true
			out.Dropped = append(out.Dropped, d)
		}
	}
	for _, s := range p.Sources {
		// Profiles of one executable record the same digests; the
		// first input's is kept.
		if key := [2]string{s.Module, s.File}; !m.sources[key] {
			m.sources[key] = true
			out.Sources = append(out.Sources, s)
		}
	}
	for _, mod := range p.Modules {
		if !m.modules[mod.Path] {
			m.modules[mod.Path] = true
			out.Modules = append(out.Modules, mod)
		}
	}
	for _, n := range p.Notes {
		if !m.notes[n] {
			m.notes[n] = true
			out.Notes = append(out.Notes, n)
		}
	}
}

// addFunctions adds the counts of fs to m, by function address.
func (m *merger) addFunctions(fs []Function) {
	out, sat := m.out, &m.sat
	for _, f := range fs {
		key := modAddr{f.Module, f.Address}
		i, ok := m.funcs[key]
		if !ok {
			m.funcs[key] = len(out.Functions)
			out.Functions = append(out.Functions, f)
			continue
		}
		g := &out.Functions[i]
		sat.add(&g.Count, f.Count)
		sat.add(&g.Returns, f.Returns)
		sat.add(&g.Samples, f.Samples)
		sat.add(&g.TimeNS, f.TimeNS)
		g.Blocks = max(g.Blocks, f.Blocks)
		// Without a block list (only --lines) the executed blocks
		// cannot be united: the larger count is the best bound.
		g.BlocksExecuted = max(g.BlocksExecuted, f.BlocksExecuted)
		g.Edges = max(g.Edges, f.Edges)
	}
}

// A saturator adds counts without wrapping around, counting the sums it
// capped.
type saturator struct{ capped int }

// add adds n to *c, or sets *c to 2^64-1 if the sum would not fit.
func (s *saturator) add(c *uint64, n uint64) {
	if n > math.MaxUint64-*c {
		s.capped++
	}
	*c = SumCounts(*c, n)
}

// SumCounts returns a+b, or 2^64-1 when the sum does not fit in 64 bits:
// counts saturate instead of wrapping around (a wrapped sum would show the
// hottest line as nearly cold). Exporters sum the counts of one file over
// several modules with it.
func SumCounts(a, b uint64) uint64 {
	sum, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return sum
}

func sameExecutable(a, b *Profile) bool {
	if a.BuildID != "" || b.BuildID != "" {
		return a.BuildID == b.BuildID
	}
	return a.Executable == b.Executable
}
