package output

import (
	pprof "github.com/patchprof/patchprof/internal/pprofpb"

	pp "github.com/patchprof/patchprof/profile"
)

// addCPUStacks adds a cpu sample per sampled call chain (Profile.Stacks),
// its locations the chain's frames, innermost first, each in its function
// and on its line: pprof's -top shows each function's own time (flat) as
// addCPU does, and -cum, -peek and the graph the time of the calls it was
// in (cum). A frame's location is shared by every chain through it.
func (b *pprofBuilder) addCPUStacks() error {
	stacks, err := counted(b.p.Stacks, func(s pp.Stack) (uint64, string) {
		return s.TimeNS, "sampled call chain at " + s.Frames[0].Address.String()
	})
	if err != nil {
		return err
	}
	type fnKey struct{ module, name, file string }
	type locKey struct {
		module string
		addr   pp.Address
	}
	fns := make(map[fnKey]*pprof.Function)
	locs := make(map[locKey]*pprof.Location)
	location := func(f pp.Frame) *pprof.Location {
		if loc := locs[locKey{f.Module, f.Address}]; loc != nil {
			return loc
		}
		name := f.Function
		if name == "" {
			name = f.Address.String()
		}
		k := fnKey{f.Module, name, f.File}
		fn := fns[k]
		if fn == nil {
			fn = b.newFunction(name, f.File, 0)
			fns[k] = fn
		}
		loc := &pprof.Location{
			ID:      uint64(len(b.prof.Location) + 1),
			Mapping: b.mapping(f.Module),
			Address: uint64(f.Address),
			Line:    []pprof.Line{{Function: fn, Line: int64(f.Line)}},
		}
		b.prof.Location = append(b.prof.Location, loc)
		locs[locKey{f.Module, f.Address}] = loc
		return loc
	}
	for _, s := range stacks {
		v := make([]int64, len(b.prof.SampleType))
		v[b.cpuIdx] = int64(s.TimeNS)
		chain := make([]*pprof.Location, len(s.Frames))
		for k, f := range s.Frames {
			chain[k] = location(f)
		}
		b.prof.Sample = append(b.prof.Sample, &pprof.Sample{Location: chain, Value: v})
	}
	return nil
}
