package serve

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// metricsOptions shape writeMetrics' output.
type metricsOptions struct {
	engine  string
	top     int   // how many functions to list
	running bool  // the target is being profiled
	windows int64 // delta windows open (Handler.windows)
}

// writeMetrics writes p in the Prometheus text exposition format
// (version 0.0.4: "# HELP", "# TYPE", then one sample a line, label values
// escaped). Names follow Prometheus' conventions: a patchprof_ prefix,
// _total on counters, base units; patchprof's own CPU and memory use the
// process_ and go_ names every Go exporter uses.
func writeMetrics(w io.Writer, p *profile.Profile, o metricsOptions) {
	m := &expo{w: w}

	m.family("patchprof_function_calls_total", "counter",
		fmt.Sprintf("Calls of a profiled function since profiling began (the %d most called functions).", o.top))
	// Most called first; ties in a stable order, so the set listed does
	// not flicker between scrapes. Functions not called yet fill the room
	// left, at 0: a counter should exist before its first increment, or
	// rate() misses that increment.
	called := slices.Clone(p.Functions)
	slices.SortFunc(called, func(a, b profile.Function) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Module, b.Module),
			strings.Compare(a.Name, b.Name), cmp.Compare(a.Address, b.Address))
	})
	omitted := 0
	if len(called) > o.top {
		omitted = len(called) - o.top
		called = called[:o.top]
	}
	for _, f := range called {
		m.sample("patchprof_function_calls_total", f.Count, "module", p.ModuleName(f.Module), "function", f.Name)
	}
	if p.HasTime() {
		writeTimeMetrics(m, p, called)
	}
	if len(p.Arcs) > 0 {
		writeCallMetrics(m, p, o.top)
	}
	m.family("patchprof_functions_omitted", "gauge",
		"Profiled functions left out of patchprof_function_calls_total to keep its cardinality bounded (--metrics-top).")
	m.sample("patchprof_functions_omitted", uint64(omitted))

	var hits uint64
	for _, s := range p.Sites {
		hits = profile.SumCounts(hits, s.Count)
	}
	m.family("patchprof_sites_planted", "gauge", "Breakpoint sites planted in the target, by the engine that serves their hits.")
	m.sample("patchprof_sites_planted", uint64(len(p.Sites)), "engine", o.engine)
	m.family("patchprof_hits_total", "counter", "Breakpoint hits served since profiling began.")
	m.sample("patchprof_hits_total", hits)

	m.family("patchprof_target_running", "gauge", "1 while the target is being profiled, 0 once its run has ended.")
	m.sample("patchprof_target_running", map[bool]uint64{true: 1}[o.running])
	m.family("patchprof_delta_windows_open", "gauge",
		"Delta profiles (/debug/pprof/counts?seconds=N) whose window has begun and not yet ended.")
	m.sample("patchprof_delta_windows_open", uint64(max(o.windows, 0)))
	m.family("patchprof_target_info", "gauge", "The profiled executable and what is counted in it; always 1.")
	m.sample("patchprof_target_info", 1, "executable", p.Executable, "mode", p.Mode)

	if cpu, ok := cpuSeconds(); ok {
		m.family("process_cpu_seconds_total", "counter", "Total user and system CPU time patchprof spent, in seconds.")
		fmt.Fprintf(w, "process_cpu_seconds_total %g\n", cpu)
	}
	// runtime.ReadMemStats, not runtime/metrics: the latter's package
	// initialization, paid by every patchprof run whether it serves or
	// not, costs more than the short stop of the world a scrape takes
	// here (issue 28). Sys and HeapAlloc are the fields the Prometheus Go
	// client reports under these names.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.family("go_memstats_sys_bytes", "gauge", "Bytes of memory patchprof obtained from the system.")
	m.sample("go_memstats_sys_bytes", ms.Sys)
	m.family("go_memstats_heap_alloc_bytes", "gauge", "Bytes of patchprof's heap objects in use.")
	m.sample("go_memstats_heap_alloc_bytes", ms.HeapAlloc)
	m.family("go_goroutines", "gauge", "Goroutines of patchprof.")
	m.sample("go_goroutines", uint64(runtime.NumGoroutine()))
}

// writeTimeMetrics writes the sampled CPU time of a --time run: for each
// function of called (the ones patchprof_function_calls_total lists, so
// that every series of calls has its time beside it and rate(time) /
// rate(calls) is the time per call), the time of its own code, and the
// target's whole sampled time, in seconds (Prometheus' base unit). Both
// are counters: samples only accumulate. A function not sampled yet is
// at 0, as its calls are.
func writeTimeMetrics(m *expo, p *profile.Profile, called []profile.Function) {
	m.family("patchprof_function_cpu_seconds_total", "counter",
		"User CPU time sampled in a profiled function's own code (not its callees) since profiling began (--time), for the functions of patchprof_function_calls_total.")
	for _, f := range called {
		m.sampleFloat("patchprof_function_cpu_seconds_total", nanosToSeconds(f.TimeNS), "module", p.ModuleName(f.Module), "function", f.Name)
	}
	m.family("patchprof_target_cpu_seconds_total", "counter",
		"User CPU time sampled in all the target's threads since profiling began (--time), inside the profiled code or not.")
	m.sampleFloat("patchprof_target_cpu_seconds_total", nanosToSeconds(p.Time.TimeNS))
}

// writeCallMetrics writes the call graph of a --calls run: the calls of
// the top most called pairs of caller and callee, summed over their call
// sites (the caller of an unknown arc is output.UnknownCallers' text, the
// callee of an indirect site "<indirect>"), most called first, ties in a
// stable order.
func writeCallMetrics(m *expo, p *profile.Profile, top int) {
	type pair struct{ callerModule, caller, calleeModule, callee string }
	sums := map[pair]uint64{}
	for _, a := range p.Arcs {
		k := pair{p.ModuleName(a.Module), a.Caller, p.ModuleName(a.CalleeModule), a.Callee}
		switch {
		case a.Kind == profile.ArcUnknown:
			k.caller, k.callerModule = "<callers unknown: indirect or uncounted>", ""
		case a.Callee == "":
			k.callee, k.calleeModule = "<indirect>", ""
		case a.Outside:
			k.calleeModule = ""
		}
		sums[k] = profile.SumCounts(sums[k], a.Count)
	}
	pairs := make([]pair, 0, len(sums))
	for k := range sums {
		pairs = append(pairs, k)
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(sums[b], sums[a]), strings.Compare(a.caller, b.caller), strings.Compare(a.callee, b.callee),
			strings.Compare(a.callerModule, b.callerModule), strings.Compare(a.calleeModule, b.calleeModule))
	})
	omitted := 0
	if len(pairs) > top {
		omitted = len(pairs) - top
		pairs = pairs[:top]
	}
	m.family("patchprof_calls_total", "counter",
		fmt.Sprintf("Calls from a caller to a callee since profiling began, summed over its call sites (--calls; the %d most called pairs).", top))
	for _, k := range pairs {
		m.sample("patchprof_calls_total", sums[k], "caller", k.caller, "callee", k.callee,
			"caller_module", k.callerModule, "callee_module", k.calleeModule)
	}
	m.family("patchprof_call_pairs_omitted", "gauge",
		"Pairs of caller and callee left out of patchprof_calls_total to keep its cardinality bounded (--metrics-top).")
	m.sample("patchprof_call_pairs_omitted", uint64(omitted))
}

// nanosToSeconds converts the profile's nanoseconds to seconds.
func nanosToSeconds(ns uint64) float64 { return float64(ns) / 1e9 }

// expo writes the text exposition format.
type expo struct{ w io.Writer }

func (e *expo) family(name, typ, help string) {
	fmt.Fprintf(e.w, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(help), name, typ)
}

// sample writes one sample; labels are name, value pairs.
func (e *expo) sample(name string, v uint64, labels ...string) {
	e.write(name, strconv.FormatUint(v, 10), labels)
}

// sampleFloat writes one sample of a float value, in the shortest form
// that reads back as the same float64.
func (e *expo) sampleFloat(name string, v float64, labels ...string) {
	e.write(name, strconv.FormatFloat(v, 'g', -1, 64), labels)
}

func (e *expo) write(name, value string, labels []string) {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=\"%s\"", labels[i], escapeLabel(labels[i+1]))
		}
		b.WriteByte('}')
	}
	b.WriteString(" " + value + "\n")
	io.WriteString(e.w, b.String())
}

// Escapes of the text exposition format: a label value escapes backslash,
// double quote and line feed; HELP text backslash and line feed.
var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
