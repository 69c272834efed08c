package output

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	pprof "github.com/patchprof/patchprof/internal/pprofpb"
	"github.com/patchprof/patchprof/profile"
)

// A Key is what the hottest lines and the function table are sorted by, and
// what the heat colours measure: a count or the sampled CPU time.
type Key int

const (
	// KeyAuto is KeyTime for a profile with sampled time, else KeyCount.
	KeyAuto Key = iota
	// KeyCount is the exact count (entries, calls).
	KeyCount
	// KeyTime is the sampled CPU time (--time).
	KeyTime
)

// ErrUnknownKey is wrapped by ParseKey's errors.
var ErrUnknownKey = errors.New("unknown sort key")

// ParseKey returns the Key named s: "auto", "count" or "time".
func ParseKey(s string) (Key, error) {
	switch s {
	case "auto", "":
		return KeyAuto, nil
	case "count":
		return KeyCount, nil
	case "time":
		return KeyTime, nil
	}
	return 0, fmt.Errorf("%w %q: want count, time or auto", ErrUnknownKey, s)
}

// resolve returns k for p: KeyTime only when p has sampled time.
func (k Key) resolve(p *profile.Profile) Key {
	if !p.HasTime() {
		return KeyCount
	}
	if k == KeyAuto {
		return KeyTime
	}
	return k
}

// fewSamples is the number of samples under which a time is marked
// unreliable ("~"): the relative standard error of a sample count n is
// about 1/sqrt(n), over 20% below 25 samples.
const fewSamples = 25

// A timeOf is the sampled time of one line or function.
type timeOf struct {
	samples, ns uint64
}

// timeCells returns the TIME, PER EXEC and SAMPLES cells of an item that
// ran count times with time t, in a profile with total samples: its share
// of all the samples, its time per execution, and its sample count. A time
// from fewer than fewSamples samples is marked "~"; an item without
// samples has "-" for its share.
func timeCells(t timeOf, count, total uint64) (share, per, samples string) {
	samples = strconv.FormatUint(t.samples, 10)
	if t.samples == 0 {
		return "-", "", samples
	}
	mark := ""
	if t.samples < fewSamples {
		mark = "~"
	}
	if total > 0 {
		share = mark + strconv.FormatFloat(100*float64(t.samples)/float64(total), 'f', 1, 64) + "%"
	}
	if count > 0 {
		per = mark + FormatNanos(float64(t.ns)/float64(count))
	}
	return share, per, samples
}

// FormatNanos writes a duration given in nanoseconds with three
// significant digits and a unit: "850ns", "3.40µs", "1.20ms", "2.61s".
func FormatNanos(ns float64) string {
	units := []struct {
		name string
		size float64
	}{{"s", 1e9}, {"ms", 1e6}, {"µs", 1e3}}
	for _, u := range units {
		if ns >= u.size {
			return sig3(ns/u.size) + u.name
		}
	}
	return sig3(ns) + "ns"
}

// sig3 formats v (at least 1 for every unit but ns) with three
// significant digits.
func sig3(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// timed reports whether the report shows time columns.
func (r *report) timed() bool { return r.p.HasTime() }

// totalSamples is the denominator of the TIME shares: every sample of the
// run, inside the profiled code or not.
func (r *report) totalSamples() uint64 {
	if r.p.Time == nil {
		return 0
	}
	return r.p.Time.Samples
}

// timeNote says how much of the time the listing covers, and what the
// marks mean.
func (r *report) timeNote() {
	t := r.p.Time
	if t == nil {
		return
	}
	rate := "at " + strconv.Itoa(t.Rate) + " Hz"
	if t.Rate == 0 {
		rate = "at several rates (merged)"
	}
	n := fmt.Sprintf("CPU time: %d samples %s, %s of user time in all; TIME is the share of all samples, PER EXEC the time per execution (per call for functions: its own code, not its callees); ~ marks a time from fewer than %d samples",
		t.Samples, rate, FormatNanos(float64(t.TimeNS)), fewSamples)
	r.extra = append(r.extra, n)
	if t.Outside > 0 && t.Samples > 0 {
		r.extra = append(r.extra, fmt.Sprintf("%.1f%% of the samples (%d) fell outside the profiled code (system libraries, the dynamic linker, processes not followed)",
			100*float64(t.Outside)/float64(t.Samples), t.Outside))
	}
}

// timeHeader is the header of the time columns, given their widths.
func timeHeader(w [3]int) string {
	return "  " + padLeft("TIME", w[0]) + "  " + padLeft("PER EXEC", w[1]) + "  " + padLeft("SAMPLES", w[2])
}

// timeColumns lays out a row's time cells.
func timeColumns(c [3]string, w [3]int) string {
	return "  " + padLeft(c[0], w[0]) + "  " + padLeft(c[1], w[1]) + "  " + padLeft(c[2], w[2])
}

// timeWidths returns the widths of the time columns of rows.
func timeWidths(cells [][3]string) [3]int {
	w := [3]int{len("TIME"), len("PER EXEC"), len("SAMPLES")}
	for _, c := range cells {
		for k := range c {
			w[k] = max(w[k], len([]rune(c[k])))
		}
	}
	return w
}

// setTime fills the time cells of a row of a line with time t.
func (r *report) setTime(rw *row, t timeOf) {
	if !r.timed() {
		return
	}
	share, per, n := timeCells(t, rw.n, r.totalSamples())
	rw.tc = [3]string{share, per, n}
	rw.tns = t.ns
}

// timeLayout returns the widths of the time columns of rows (nil when the
// profile has no time) and a function giving the blank cells of a row
// without them ("" for the header row: the column titles).
func (r *report) timeLayout(rows []row) (*[3]int, func(string) string) {
	if !r.timed() {
		return nil, func(string) string { return "" }
	}
	cells := make([][3]string, 0, len(rows))
	for _, rw := range rows {
		cells = append(cells, rw.tc)
	}
	w := timeWidths(cells)
	return &w, func(kind string) string {
		if kind == "" {
			return timeHeader(w)
		}
		return timeColumns([3]string{}, w)
	}
}

// funcTimes returns the time cells of the function table's rows and their
// widths; nil widths when the profile has no time.
func (r *report) funcTimes(funcs []profile.Function) ([][3]string, *[3]int) {
	if !r.timed() {
		return nil, nil
	}
	cells := make([][3]string, len(funcs))
	for k, f := range funcs {
		share, per, n := timeCells(timeOf{f.Samples, f.TimeNS}, f.Count, r.totalSamples())
		cells[k] = [3]string{share, per, n}
	}
	w := timeWidths(cells)
	return cells, &w
}

// heatOf is the colour of a row's count: by its count, or with Heat set
// to KeyTime, by its time against the hottest line's (coldest when it ran
// but was never sampled).
func (r *report) heatOf(rw row) string {
	if r.opt.Heat != KeyTime || !r.timed() || rw.n == 0 {
		return heat(rw.n, r.maxCount)
	}
	if rw.tns == 0 {
		return heatScale[0]
	}
	return heat(rw.tns, r.maxTime)
}

// addCPU adds a cpu sample per sampled address (WritePprof), module by
// module in address order, at the address, in the function and on the
// line the profile resolved it to: pprof's -top then sums the time per
// function as the function table does, and -lines per line as the listing.
func (b *pprofBuilder) addCPU() error {
	if len(b.p.Stacks) > 0 {
		return b.addCPUStacks()
	}
	samples, err := counted(b.p.Samples, func(s profile.Sample) (uint64, string) {
		return s.TimeNS, "sampled address " + s.Address.String()
	})
	if err != nil {
		return err
	}
	slices.SortFunc(samples, func(x, y profile.Sample) int {
		return cmp.Or(cmp.Compare(b.rank[x.Module], b.rank[y.Module]), strings.Compare(x.Module, y.Module),
			cmp.Compare(x.Address, y.Address))
	})
	type fnKey struct{ module, name, file string }
	fns := make(map[fnKey]*pprof.Function)
	for _, s := range samples {
		name := s.Function
		if name == "" {
			name = s.Address.String()
		}
		k := fnKey{s.Module, name, s.File}
		fn := fns[k]
		if fn == nil {
			fn = b.newFunction(name, s.File, 0)
			fns[k] = fn
		}
		b.addSample(b.cpuIdx, s.TimeNS, &pprof.Location{
			Address: uint64(s.Address),
			Line:    []pprof.Line{{Function: fn, Line: int64(s.Line)}},
		}, s.Module)
	}
	return nil
}

// htmlTime gives a row of the HTML page its sampled time t, as the title
// of its count (share, time per execution, samples), and with Heat set to
// KeyTime its shading by time against the hottest line's maxTime.
func (r *report) htmlTime(row *htmlRow, t timeOf, count, maxTime uint64) {
	share, per, n := timeCells(t, count, r.totalSamples())
	row.Title = "CPU time: " + share + " of the samples, " + n + " samples"
	if per != "" {
		row.Title += ", " + per + " per execution"
	}
	if r.opt.Heat == KeyTime && count > 0 {
		row.Style = template.CSS(htmlHeat(max(t.ns, 1), maxTime))
	}
}
