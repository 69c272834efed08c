package serve

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// TestMetricsText checks the patchprof_ families exactly: most called
// first, ties by module then name, at most top of them, label values
// escaped, executable named by path.
func TestMetricsText(t *testing.T) {
	p := &profile.Profile{
		Executable: "/srv/app",
		Mode:       profile.ModeFuncs,
		Modules:    []profile.Module{{Path: "/lib/libz.so.1", Kind: profile.ModuleLibrary}},
		Functions: []profile.Function{
			{Name: "main", Count: 1, Address: 0x10},
			{Name: `op"quote"`, Count: 50, Address: 0x20},
			{Name: `a\b` + "\nc", Count: 50, Address: 0x30},
			{Name: "inflate", Module: "/lib/libz.so.1", Count: 50, Address: 0x40},
			{Name: "never", Count: 0, Address: 0x50},
			{Name: "hot", Count: 900, Address: 0x60},
		},
		Sites: []profile.Site{{Address: 0x10, Count: 1}, {Address: 0x20, Count: 50}, {Address: 0x30, Count: 50},
			{Address: 0x40, Count: 50, Module: "/lib/libz.so.1"}, {Address: 0x50}, {Address: 0x60, Count: 900}},
	}
	var b bytes.Buffer
	writeMetrics(&b, p, metricsOptions{engine: "xol", top: 4, running: true})
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "patchprof_") {
			got = append(got, l)
		}
	}
	want := []string{
		"# HELP patchprof_function_calls_total Calls of a profiled function since profiling began (the 4 most called functions).",
		"# TYPE patchprof_function_calls_total counter",
		`patchprof_function_calls_total{module="/srv/app",function="hot"} 900`,
		`patchprof_function_calls_total{module="/srv/app",function="a\\b\nc"} 50`,
		`patchprof_function_calls_total{module="/srv/app",function="op\"quote\""} 50`,
		`patchprof_function_calls_total{module="/lib/libz.so.1",function="inflate"} 50`,
		"# HELP patchprof_functions_omitted Profiled functions left out of patchprof_function_calls_total to keep its cardinality bounded (--metrics-top).",
		"# TYPE patchprof_functions_omitted gauge",
		"patchprof_functions_omitted 2",
		"# HELP patchprof_sites_planted Breakpoint sites planted in the target, by the engine that serves their hits.",
		"# TYPE patchprof_sites_planted gauge",
		`patchprof_sites_planted{engine="xol"} 6`,
		"# HELP patchprof_hits_total Breakpoint hits served since profiling began.",
		"# TYPE patchprof_hits_total counter",
		"patchprof_hits_total 1051",
		"# HELP patchprof_target_running 1 while the target is being profiled, 0 once its run has ended.",
		"# TYPE patchprof_target_running gauge",
		"patchprof_target_running 1",
		"# HELP patchprof_delta_windows_open Delta profiles (/debug/pprof/counts?seconds=N) whose window has begun and not yet ended.",
		"# TYPE patchprof_delta_windows_open gauge",
		"patchprof_delta_windows_open 0",
		"# HELP patchprof_target_info The profiled executable and what is counted in it; always 1.",
		"# TYPE patchprof_target_info gauge",
		`patchprof_target_info{executable="/srv/app",mode="funcs"} 1`,
	}
	// The executable's module ("") sorts before the library's path.
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, fam := range []string{"go_memstats_sys_bytes", "go_memstats_heap_alloc_bytes", "go_goroutines", "process_cpu_seconds_total"} {
		if !strings.Contains(b.String(), "# TYPE "+fam+" ") || !strings.Contains(b.String(), "\n"+fam+" ") {
			t.Errorf("no %s family:\n%s", fam, b.String())
		}
	}
}

func TestMetricsEndpoint(t *testing.T) {
	h := NewHandler(Options{Source: &fakeSource{step: 4}, Engine: "classic"})
	w := get(t, h, "/metrics")
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("status %d, type %q", w.Code, w.Header().Get("Content-Type"))
	}
	for _, l := range []string{
		`patchprof_function_calls_total{module="/home/ann/prog/a",function="work"} 4`,
		`patchprof_function_calls_total{module="/home/ann/prog/a",function="main"} 1`,
		`patchprof_sites_planted{engine="classic"} 3`,
		"patchprof_hits_total 5",
		"patchprof_target_running 1",
	} {
		if !strings.Contains(w.Body.String(), "\n"+l+"\n") {
			t.Errorf("no line %q in:\n%s", l, w.Body)
		}
	}
	if !strings.Contains(w.Body.String(), `function="never"} 0`+"\n") {
		t.Errorf("a function not called yet is not listed at 0 (there is room):\n%s", w.Body)
	}
	h.Finish(example(9))
	if w := get(t, h, "/metrics"); !strings.Contains(w.Body.String(), "\npatchprof_target_running 0\n") ||
		!strings.Contains(w.Body.String(), `function="work"} 9`) {
		t.Errorf("after Finish:\n%s", w.Body)
	}
}

// TestMetricsTime checks the CPU time families of a --time profile
// exactly: seconds of each listed function's own code beside its calls
// (the same functions, in the same order), and the target's whole time;
// a profile without time has neither family.
func TestMetricsTime(t *testing.T) {
	p := &profile.Profile{
		Executable: "/srv/app",
		Mode:       profile.ModeFuncs,
		Time:       &profile.Time{Rate: 997, Samples: 3000, TimeNS: 3_009_027_000},
		Functions: []profile.Function{
			{Name: "main", Count: 1, Address: 0x10},
			{Name: "thrice", Count: 200, Address: 0x20, Samples: 2070, TimeNS: 2_076_228_630},
			{Name: "once", Count: 200, Address: 0x30, Samples: 694, TimeNS: 696_088_246},
			{Name: "cold", Count: 0, Address: 0x40, Samples: 5, TimeNS: 5_015_045},
		},
	}
	var b bytes.Buffer
	writeMetrics(&b, p, metricsOptions{engine: "jump", top: 3, running: true})
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "cpu_seconds") && strings.Contains(l, "patchprof_") {
			got = append(got, l)
		}
	}
	want := []string{
		"# HELP patchprof_function_cpu_seconds_total User CPU time sampled in a profiled function's own code (not its callees) since profiling began (--time), for the functions of patchprof_function_calls_total.",
		"# TYPE patchprof_function_cpu_seconds_total counter",
		`patchprof_function_cpu_seconds_total{module="/srv/app",function="once"} 0.696088246`,
		`patchprof_function_cpu_seconds_total{module="/srv/app",function="thrice"} 2.07622863`,
		`patchprof_function_cpu_seconds_total{module="/srv/app",function="main"} 0`,
		"# HELP patchprof_target_cpu_seconds_total User CPU time sampled in all the target's threads since profiling began (--time), inside the profiled code or not.",
		"# TYPE patchprof_target_cpu_seconds_total counter",
		"patchprof_target_cpu_seconds_total 3.009027",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The time follows the calls of the same functions.
	if i, j := strings.Index(b.String(), "patchprof_function_calls_total{"), strings.Index(b.String(), "patchprof_function_cpu_seconds_total{"); i < 0 || j < i {
		t.Errorf("calls at %d, time at %d; want the time after the calls:\n%s", i, j, b.String())
	}
	p.Time = nil
	b.Reset()
	writeMetrics(&b, p, metricsOptions{engine: "jump", top: 3})
	if strings.Contains(b.String(), "cpu_seconds_total{") || strings.Contains(b.String(), "patchprof_target_cpu") {
		t.Errorf("time families without --time:\n%s", b.String())
	}
}

// TestMetricsCalls checks the call graph family of a --calls profile:
// calls per caller and callee, summed over call sites, most called first,
// the unknown callers and indirect sites by name, cut at --metrics-top.
func TestMetricsCalls(t *testing.T) {
	p := &profile.Profile{
		Executable: "/srv/app",
		Mode:       profile.ModeFuncs,
		Functions:  []profile.Function{{Name: "main", Count: 1, Address: 0x10}, {Name: "leaf", Count: 9, Address: 0x20}},
		Arcs: []profile.Arc{
			{Caller: "main", Site: 0x11, Callee: "leaf", CalleeAddress: 0x20, Count: 3, Kind: profile.ArcDirect},
			{Caller: "main", Site: 0x15, Callee: "leaf", CalleeAddress: 0x20, Count: 5, Kind: profile.ArcDirect},
			{Caller: "main", Site: 0x19, Count: 1, Kind: profile.ArcIndirect},
			{Caller: "main", Site: 0x1d, Callee: "puts", Outside: true, Count: 2, Kind: profile.ArcPLT},
		},
	}
	p.SetUnknownArcs()
	var b bytes.Buffer
	writeMetrics(&b, p, metricsOptions{engine: "jump", top: 3, running: true})
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "patchprof_call") {
			got = append(got, l)
		}
	}
	want := []string{
		`patchprof_calls_total{caller="main",callee="leaf",caller_module="/srv/app",callee_module="/srv/app"} 8`,
		`patchprof_calls_total{caller="main",callee="puts",caller_module="/srv/app",callee_module=""} 2`,
		`patchprof_calls_total{caller="<callers unknown: indirect or uncounted>",callee="leaf",caller_module="",callee_module="/srv/app"} 1`,
		`patchprof_call_pairs_omitted 2`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
