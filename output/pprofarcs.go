package output

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	pprof "github.com/patchprof/patchprof/internal/pprofpb"
	"github.com/patchprof/patchprof/profile"
)

// PprofUnknownCallers is the pprof function of the calls no counted call
// site accounts for (UnknownCallers): pprof drops what is between angle
// brackets from a name, taking it for C++ template arguments.
const PprofUnknownCallers = "[callers unknown: indirect or uncounted]"

// addArcCalls adds the calls samples of a profile with a call graph
// (--calls): one per arc that reaches a function, keyed by the two-frame
// stack callee (at its entry) and caller (at the call site, on its line),
// so that `go tool pprof -peek`, -traces and the graph views show who
// calls whom. A function's samples add up to its calls: the arcs of its
// counted call sites, then the rest under a caller named UnknownCallers.
// The calls of an indirect site whose callees are not known are among
// their callees' unknown callers, so they have no sample of their own.
func (b *pprofBuilder) addArcCalls() error {
	p := b.p
	arcs := slices.DeleteFunc(slices.Clone(p.Arcs), func(a profile.Arc) bool {
		return a.Callee == "" || a.Count == 0
	})
	for _, a := range arcs {
		if a.Count > math.MaxInt64 {
			return fmt.Errorf("call of %s from %s: %w: %d", a.Callee, callerName(a), ErrCountTooLarge, a.Count)
		}
	}
	slices.SortFunc(arcs, func(x, y profile.Arc) int {
		return cmp.Or(cmp.Compare(b.rank[x.CalleeModule], b.rank[y.CalleeModule]), strings.Compare(x.CalleeModule, y.CalleeModule),
			cmp.Compare(x.CalleeAddress, y.CalleeAddress), strings.Compare(x.Callee, y.Callee),
			cmp.Compare(b.rank[x.Module], b.rank[y.Module]), strings.Compare(x.Module, y.Module), cmp.Compare(x.Site, y.Site))
	})
	type fnKey struct{ module, name string }
	byName := make(map[fnKey]profile.Function, len(p.Functions))
	for _, f := range p.Functions {
		if _, ok := byName[fnKey{f.Module, f.Name}]; !ok {
			byName[fnKey{f.Module, f.Name}] = f
		}
	}
	fns := make(map[fnKey]*pprof.Function)
	function := func(module, name string) *pprof.Function {
		k := fnKey{module, name}
		if fn := fns[k]; fn != nil {
			return fn
		}
		f := byName[k]
		fn := b.newFunction(name, f.File, f.Line)
		fns[k] = fn
		return fn
	}
	type locKey struct {
		module, name string
		addr         profile.Address
		line         int
	}
	locs := make(map[locKey]*pprof.Location)
	location := func(module, name string, addr profile.Address, line int) *pprof.Location {
		k := locKey{module, name, addr, line}
		if l := locs[k]; l != nil {
			return l
		}
		l := &pprof.Location{
			ID: uint64(len(b.prof.Location) + 1), Mapping: b.mapping(module), Address: uint64(addr),
			Line: []pprof.Line{{Function: function(module, name), Line: int64(line)}},
		}
		locs[k] = l
		b.prof.Location = append(b.prof.Location, l)
		return l
	}
	for _, a := range arcs {
		calleeModule, calleeLine := a.CalleeModule, 0
		if a.Outside {
			calleeModule = a.Module // known by name only; kept beside its caller
		} else {
			calleeLine = byName[fnKey{a.CalleeModule, a.Callee}].Line
		}
		stack := []*pprof.Location{location(calleeModule, a.Callee, a.CalleeAddress, calleeLine)}
		caller := a.Caller
		if a.Kind == profile.ArcUnknown {
			caller = PprofUnknownCallers
		}
		stack = append(stack, location(a.Module, caller, a.Site, a.Line))
		v := make([]int64, len(b.prof.SampleType))
		v[b.callIdx] = int64(a.Count)
		b.prof.Sample = append(b.prof.Sample, &pprof.Sample{Location: stack, Value: v})
	}
	return nil
}
