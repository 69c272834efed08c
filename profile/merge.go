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
// line, by function address and by site address. Profiles match when their
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
	out := &Profile{
		Version: Version, Executable: first.Executable, BuildID: first.BuildID, Args: first.Args,
		Lines: []Line{}, Functions: []Function{}, Sites: []Site{},
	}
	type lineKey struct {
		module, file string
		line         int
	}
	lines := map[lineKey]int{}
	funcs := map[modAddr]int{}
	sites := map[modAddr]int{}
	dropped := map[modAddr]bool{}
	modules := map[string]bool{}
	notes := map[string]bool{}
	hasLines, hasFuncs := false, false
	var sat saturator
	bm := blockMerger{sat: &sat}
	samples := map[modAddr]int{}
	for k, p := range ps {
		if !force && !sameExecutable(first, p) {
			return nil, fmt.Errorf("%w: %s (build ID %q) and %s (build ID %q): use --force to merge anyway",
				ErrMismatch, first.Executable, first.BuildID, p.Executable, p.BuildID)
		}
		hasLines = hasLines || p.HasLines()
		hasFuncs = hasFuncs || p.HasFuncs()
		for _, l := range p.Lines {
			key := lineKey{l.Module, l.File, l.Line}
			if i, ok := lines[key]; ok {
				sat.add(&out.Lines[i].Count, l.Count)
				sat.add(&out.Lines[i].Samples, l.Samples)
				sat.add(&out.Lines[i].TimeNS, l.TimeNS)
				continue
			}
			lines[key] = len(out.Lines)
			out.Lines = append(out.Lines, l)
		}
		for _, f := range p.Functions {
			key := modAddr{f.Module, f.Address}
			if i, ok := funcs[key]; ok {
				sat.add(&out.Functions[i].Count, f.Count)
				sat.add(&out.Functions[i].Returns, f.Returns)
				sat.add(&out.Functions[i].Samples, f.Samples)
				sat.add(&out.Functions[i].TimeNS, f.TimeNS)
				out.Functions[i].Blocks = max(out.Functions[i].Blocks, f.Blocks)
				// Without a block list (only --lines) the executed blocks
				// cannot be united: the larger count is the best bound.
				out.Functions[i].BlocksExecuted = max(out.Functions[i].BlocksExecuted, f.BlocksExecuted)
				out.Functions[i].Edges = max(out.Functions[i].Edges, f.Edges)
				continue
			}
			funcs[key] = len(out.Functions)
			out.Functions = append(out.Functions, f)
		}
		for _, s := range p.Sites {
			key := modAddr{s.Module, s.Address}
			if i, ok := sites[key]; ok {
				sat.add(&out.Sites[i].Count, s.Count)
				out.Sites[i].Kind = UnionKind(out.Sites[i].Kind, s.Kind)
				continue
			}
			sites[key] = len(out.Sites)
			out.Sites = append(out.Sites, s)
		}
		bm.add(out, p)
		mergeTime(out, p, samples, &sat)
		for _, d := range p.Dropped {
			if key := (modAddr{d.Module, d.Address}); !dropped[key] {
				dropped[key] = true
				out.Dropped = append(out.Dropped, d)
			}
		}
		for _, m := range p.Modules {
			if !modules[m.Path] {
				modules[m.Path] = true
				out.Modules = append(out.Modules, m)
			}
		}
		for _, n := range p.Notes {
			if !notes[n] {
				notes[n] = true
				out.Notes = append(out.Notes, n)
			}
		}
		if k == len(ps)-1 {
			out.Exit = p.Exit
		}
	}
	switch {
	case hasLines && hasFuncs:
		out.Mode = ModeLinesFuncs
	case hasFuncs:
		out.Mode = ModeFuncs
	default:
		out.Mode = ModeLines
	}
	bm.finish(out)
	if len(ps) > 1 {
		out.Notes = append(out.Notes, fmt.Sprintf("merged from %d profiles", len(ps)))
	}
	if sat.capped > 0 {
		if sat.capped == 1 {
			out.Notes = append(out.Notes, fmt.Sprintf("1 merged count passed 2^64-1 and was capped at %d: it is a lower bound", uint64(math.MaxUint64)))
		} else {
			out.Notes = append(out.Notes, fmt.Sprintf("%d merged counts passed 2^64-1 and were capped at %d: they are lower bounds", sat.capped, uint64(math.MaxUint64)))
		}
	}
	out.Sort()
	return out, nil
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
