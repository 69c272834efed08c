package output

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	pprof "github.com/patchprof/patchprof/internal/pprofpb"
	"github.com/patchprof/patchprof/profile"
)

// The sample types of a profile written by WritePprof, for pprof's
// -sample_index flag. Both are exact counts, in unit "count".
const (
	// PprofCalls is the sample type of function call counts: one sample
	// per called function, at its entry.
	PprofCalls = "calls"
	// PprofLineEntries is the sample type of line entry counts: one sample
	// per source line that ran.
	PprofLineEntries = "line_entries"
	// PprofBlockEntries is the sample type of executed basic blocks
	// (--blocks): one sample per block, at its address, in its function.
	PprofBlockEntries = "block_entries"
	// PprofCPU is the sample type of the sampled CPU time (--time), in
	// nanoseconds: one sample per sampled address, in its function and
	// on its line.
	PprofCPU = "cpu"
)

// ErrCountTooLarge is returned by WritePprof for a count that does not fit
// in pprof's signed 64-bit sample values.
var ErrCountTooLarge = errors.New("count too large for a pprof sample")

// WritePprof writes p as a gzipped pprof protocol buffer, for `go tool
// pprof` and the tools that read its format.
//
// pprof sums sample values per node of the view (function, file or line),
// so call counts and line counts must never share a value: a function's
// calls plus the entries of its lines would be a number that means
// nothing. Each kind of count therefore has its own sample type, present
// only when p counted it (PprofCalls when p.HasFuncs, PprofLineEntries when
// p.HasLines, in that order), and every sample is non-zero in exactly one
// of them:
//
//   - For each function with a non-zero count, a sample with its call
//     count at a location holding the function's link-time entry address
//     and its entry file and line. `go tool pprof -sample_index=calls -top`
//     lists calls per function.
//   - For each source line with a non-zero count, a sample with its entry
//     count at a location with that file and line and no address (a line
//     may span several planted addresses). The line's pprof function is
//     the function whose code holds it (Line.Function), so
//     `-sample_index=line_entries -list FUNC` annotates a function and
//     -top the total entries per function; a line of a profile that does
//     not name its function (older files) gets a pseudo-function named
//     after its source file (the path as recorded, so same-named files in
//     different directories stay apart). `-top -lines` (or -traces) gives
//     exact counts per line.
//
// Zero counts are left out: pprof shows absent and zero alike, and leaving
// them out keeps the file small. The counts are exact, not sampled, so a
// rarely called function matters as much as a hot one; pprof hides nodes
// under 0.5% of the total unless given -nodefraction=0.
//
// The executable is one mapping spanning the whole address space at offset
// 0, which pprof takes to mean the addresses are already link-time
// addresses (as the profile's are) and need no load-base adjustment; it is
// marked as fully symbolized, so pprof does not look for the binary. Each
// other module (p.Modules: shared libraries, exec'd programs) gets a
// mapping of its own, alike but for its path and build ID, in
// Profile.ModulePaths order after the executable's; every location belongs
// to the mapping of its entry's module, so the same address or line in
// two modules stays two locations (pprof still sums them per function,
// file or line). The target's argv and the profile's notes become pprof
// comments (-comments).
//
// With a call graph (--calls), the calls samples are the arcs instead,
// each at a two-frame stack, callee over caller (addArcCalls), so that
// `go tool pprof -peek FUNC` lists each function's callers and callees
// with their calls.
//
// DefaultSampleType is PprofCalls when functions were counted, so a bare
// `go tool pprof -top` shows calls. The output is deterministic: functions
// go module by module in address order, lines module by module in file
// then line order, whatever the order in p, and p is not modified.
func WritePprof(w io.Writer, p *profile.Profile) error {
	return WritePprofWindow(w, p, time.Time{}, time.Time{})
}

// WritePprofWindow is WritePprof for counts taken from start to end: the
// pprof profile's time and duration say so (pprof's header, and what a
// continuous profiler files it under). A zero start leaves them out.
func WritePprofWindow(w io.Writer, p *profile.Profile, start, end time.Time) error {
	if p == nil {
		return ErrNilProfile
	}
	prof, err := pprofProfile(p)
	if err != nil {
		return err
	}
	if !start.IsZero() {
		prof.TimeNanos = start.UnixNano()
		prof.DurationNanos = end.Sub(start).Nanoseconds()
	}
	if err := prof.CheckValid(); err != nil {
		return fmt.Errorf("pprof profile of %s: %w", p.Executable, err)
	}
	if err := prof.Write(w); err != nil {
		return fmt.Errorf("write pprof profile: %w", err)
	}
	return nil
}

// pprofProfile builds the pprof profile WritePprof writes; see there for
// the layout: the sample types and comments, one mapping per module, then
// a sample per called function and per executed line.
func pprofProfile(p *profile.Profile) (*pprof.Profile, error) {
	b := newPprofBuilder(p)
	if b.callIdx >= 0 {
		if err := b.addCalls(); err != nil {
			return nil, err
		}
	}
	if b.lineIdx >= 0 {
		if err := b.addLines(); err != nil {
			return nil, err
		}
	}
	if b.blockIdx >= 0 {
		if err := b.addBlocks(); err != nil {
			return nil, err
		}
	}
	if b.cpuIdx >= 0 {
		if err := b.addCPU(); err != nil {
			return nil, err
		}
	}
	return b.prof, nil
}

// A pprofBuilder accumulates the pprof profile of p.
type pprofBuilder struct {
	p                *profile.Profile
	prof             *pprof.Profile
	callIdx, lineIdx int                       // sample value indexes; -1 when not counted
	blockIdx         int                       // likewise for blocks
	cpuIdx           int                       // likewise for the sampled time
	mappings         map[string]*pprof.Mapping // by module path; "" is the executable
	rank             map[string]int            // module path -> position in ModulePaths
}

// newPprofBuilder starts the profile of p: its sample types, comments and
// mappings.
func newPprofBuilder(p *profile.Profile) *pprofBuilder {
	b := &pprofBuilder{p: p, callIdx: -1, lineIdx: -1, blockIdx: -1, cpuIdx: -1, rank: map[string]int{}}
	b.prof = &pprof.Profile{
		PeriodType: &pprof.ValueType{Type: "count", Unit: "count"},
		// Every trap is counted: nothing is sampled, so one sample value
		// unit is one event.
		Period: 1,
	}
	prof := b.prof
	if p.HasFuncs() {
		b.callIdx = len(prof.SampleType)
		prof.SampleType = append(prof.SampleType, &pprof.ValueType{Type: PprofCalls, Unit: "count"})
		prof.DefaultSampleType = PprofCalls
	}
	if p.HasLines() {
		b.lineIdx = len(prof.SampleType)
		prof.SampleType = append(prof.SampleType, &pprof.ValueType{Type: PprofLineEntries, Unit: "count"})
	}
	if p.HasBlocks() {
		b.blockIdx = len(prof.SampleType)
		prof.SampleType = append(prof.SampleType, &pprof.ValueType{Type: PprofBlockEntries, Unit: "count"})
	}
	if p.HasTime() {
		b.cpuIdx = len(prof.SampleType)
		prof.SampleType = append(prof.SampleType, &pprof.ValueType{Type: PprofCPU, Unit: "nanoseconds"})
	}
	if len(p.Args) > 0 {
		prof.Comments = append(prof.Comments, "command: "+strings.Join(p.Args, " "))
	}
	prof.Comments = append(prof.Comments, p.Notes...)

	exe := &pprof.Mapping{
		ID:    1,
		Start: 0,
		// [0, 2^64) at offset 0: pprof's "addresses already adjusted"
		// mapping (internal/elfexec.GetBase), matching link-time addresses.
		Limit:           math.MaxUint64,
		Offset:          0,
		File:            p.Executable,
		BuildID:         p.BuildID,
		HasFunctions:    true,
		HasFilenames:    true,
		HasLineNumbers:  true,
		HasInlineFrames: false,
	}
	prof.Mapping = []*pprof.Mapping{exe}
	b.mappings = map[string]*pprof.Mapping{"": exe}
	for i, m := range p.ModulePaths() {
		b.rank[m] = i
		b.mapping(m)
	}
	return b
}

// mapping returns the mapping of a module, made on first use for a module
// p.Modules does not list.
func (b *pprofBuilder) mapping(module string) *pprof.Mapping {
	if m := b.mappings[module]; m != nil {
		return m
	}
	m := &pprof.Mapping{
		ID:    uint64(len(b.prof.Mapping) + 1),
		Limit: math.MaxUint64,
		File:  module,
		// Addresses are the module's own link-time addresses, as for the
		// executable.
		HasFunctions:   true,
		HasFilenames:   true,
		HasLineNumbers: true,
	}
	for _, mod := range b.p.Modules {
		if mod.Path == module {
			m.BuildID = mod.BuildID
		}
	}
	b.mappings[module] = m
	b.prof.Mapping = append(b.prof.Mapping, m)
	return m
}

// addSample adds a sample of count at loc, in module, as value idx.
func (b *pprofBuilder) addSample(idx int, count uint64, loc *pprof.Location, module string) {
	v := make([]int64, len(b.prof.SampleType))
	v[idx] = int64(count)
	loc.ID = uint64(len(b.prof.Location) + 1)
	loc.Mapping = b.mapping(module)
	b.prof.Location = append(b.prof.Location, loc)
	b.prof.Sample = append(b.prof.Sample, &pprof.Sample{Location: []*pprof.Location{loc}, Value: v})
}

// newFunction adds a pprof function.
func (b *pprofBuilder) newFunction(name, file string, start int) *pprof.Function {
	fn := &pprof.Function{
		ID:         uint64(len(b.prof.Function) + 1),
		Name:       name,
		SystemName: name,
		Filename:   file,
		StartLine:  int64(start),
	}
	b.prof.Function = append(b.prof.Function, fn)
	return fn
}

// addCalls adds a calls sample per called function, module by module in
// address order, at the function's entry.
func (b *pprofBuilder) addCalls() error {
	if len(b.p.Arcs) > 0 {
		return b.addArcCalls()
	}
	entries, err := counted(b.p.Functions, func(f profile.Function) (uint64, string) {
		return f.Count, "function " + f.Name
	})
	if err != nil {
		return err
	}
	slices.SortFunc(entries, func(x, y profile.Function) int {
		return cmp.Or(cmp.Compare(b.rank[x.Module], b.rank[y.Module]), strings.Compare(x.Module, y.Module),
			cmp.Compare(x.Address, y.Address), strings.Compare(x.Name, y.Name))
	})
	for _, f := range entries {
		fn := b.newFunction(f.Name, f.File, f.Line)
		b.addSample(b.callIdx, f.Count, &pprof.Location{
			Address: uint64(f.Address),
			Line:    []pprof.Line{{Function: fn, Line: int64(f.Line)}},
		}, f.Module)
	}
	return nil
}

// addLines adds a line-entries sample per executed line, module by module
// in file then line order, in a function per (module, function, file):
// the line's function, or its file when unknown.
func (b *pprofBuilder) addLines() error {
	lines, err := counted(b.p.Lines, func(l profile.Line) (uint64, string) {
		return l.Count, fmt.Sprintf("%s:%d", l.File, l.Line)
	})
	if err != nil {
		return err
	}
	slices.SortFunc(lines, func(x, y profile.Line) int {
		return cmp.Or(cmp.Compare(b.rank[x.Module], b.rank[y.Module]), strings.Compare(x.Module, y.Module),
			strings.Compare(x.File, y.File), cmp.Compare(x.Line, y.Line))
	})
	type fnKey struct{ module, name, file string }
	fns := make(map[fnKey]*pprof.Function)
	for _, l := range lines {
		name := l.Function
		if name == "" {
			name = l.File
		}
		k := fnKey{l.Module, name, l.File}
		fn := fns[k]
		if fn == nil {
			fn = b.newFunction(name, l.File, 0)
			fns[k] = fn
		}
		b.addSample(b.lineIdx, l.Count, &pprof.Location{
			Line: []pprof.Line{{Function: fn, Line: int64(l.Line)}},
		}, l.Module)
	}
	return nil
}

// addBlocks adds a block-entries sample per executed block, module by
// module in address order, at the block's address in its function (named
// from the function table; the function's entry address otherwise).
func (b *pprofBuilder) addBlocks() error {
	type fnKey struct {
		module string
		addr   profile.Address
	}
	funcs := make(map[fnKey]profile.Function, len(b.p.Functions))
	for _, f := range b.p.Functions {
		funcs[fnKey{f.Module, f.Address}] = f
	}
	blocks, err := counted(b.p.Blocks, func(bl profile.Block) (uint64, string) {
		return bl.Count, "block " + bl.Address.String()
	})
	if err != nil {
		return err
	}
	slices.SortFunc(blocks, func(x, y profile.Block) int {
		return cmp.Or(cmp.Compare(b.rank[x.Module], b.rank[y.Module]), strings.Compare(x.Module, y.Module),
			cmp.Compare(x.Address, y.Address))
	})
	fns := make(map[fnKey]*pprof.Function)
	for _, bl := range blocks {
		k := fnKey{bl.Module, bl.Function}
		f, known := funcs[k]
		if !known {
			f = profile.Function{Name: bl.Function.String()}
		}
		fn := fns[k]
		if fn == nil {
			fn = b.newFunction(f.Name, f.File, f.Line)
			fns[k] = fn
		}
		b.addSample(b.blockIdx, bl.Count, &pprof.Location{
			Address: uint64(bl.Address),
			Line:    []pprof.Line{{Function: fn, Line: int64(f.Line)}},
		}, bl.Module)
	}
	return nil
}

// counted returns the items whose count is not 0, in their order, or an
// error naming the first whose count a pprof sample value (int64) cannot
// hold. count gives an item's count and how an error names it.
func counted[T any](items []T, count func(T) (uint64, string)) ([]T, error) {
	var out []T
	for _, it := range items {
		n, name := count(it)
		if n == 0 {
			continue
		}
		if n > math.MaxInt64 {
			return nil, fmt.Errorf("%s: %w: %d", name, ErrCountTooLarge, n)
		}
		out = append(out, it)
	}
	return out, nil
}
