package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchprof/patchprof/profile"
)

func TestMedian(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{ms(7), 7 * time.Millisecond},
		{ms(9, 1, 5), 5 * time.Millisecond},
		{ms(4, 1, 3, 2), 2500 * time.Microsecond},
		{ms(100, 1, 1, 1, 100), time.Millisecond},
	} {
		in := slices.Clone(tc.in)
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("median reordered its input: %v, was %v", tc.in, in)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{formatSeconds(18 * time.Millisecond), "0.018 s"},
		{formatSeconds(2346 * time.Millisecond), "2.35 s"},
		{formatSeconds(45 * time.Second), "45.0 s"},
		{formatSeconds(120 * time.Second), "120 s"},
		{formatRatio(1.0912), "1.09x"},
		{formatRatio(57.94), "57.9x"},
		{formatRatio(2978.4), "2,978x"},
		{formatNs(0.62), "0.6"},
		{formatNs(-3.04), "-3.0"},
		{formatNs(15234.6), "15,235"},
		{thousands(1234567), "1,234,567"},
		{thousands(-1000), "-1,000"},
		{thousands(999), "999"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTable(t *testing.T) {
	s := time.Second
	ms := []Measure{
		{Config: cfgNative, Label: "native", Times: []time.Duration{s / 10, s / 5, s / 10}, RSS: []int64{1024, 3072, 2048}},
		{Config: cfgFloor, Label: "floor", Times: []time.Duration{s / 8}},
		{Config: cfgGcov, Label: "gcov", Times: []time.Duration{s / 5}},
		{Config: cfgUftrace, Label: "uftrace", Note: "skipped: uftrace not installed"},
		{Config: cfgClassic, Label: "classic", TimedOut: true},
		{Config: cfgXOL, Label: "xol", Times: []time.Duration{11 * s, 10 * s, 12 * s}, RSS: []int64{40960, 51200}},
	}
	var b strings.Builder
	if err := writeTable(&b, rows("fib", ms, 1000000, 2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	want := `| workload | configuration | median | vs native | vs floor | ns/hit over native | peak RSS |
| --- | --- | ---: | ---: | ---: | ---: | ---: |
| fib | native | 0.100 s | 1.00x | 0.80x | - | 2.0 MiB |
|  | floor | 0.125 s | 1.25x | 1.00x | - | - |
|  | gcov | 0.200 s | 2.00x | 1.60x | 100 | - |
|  | uftrace | skipped: uftrace not installed |  |  |  |  |
|  | classic | >120 s | >1,200x | >960x | - | - |
|  | xol | 11.0 s | 110x | 88.0x | 10,900 | 45.0 MiB |
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	// Without a native measure there are no ratios.
	r := rows("w", ms[2:3], 10, s)
	if r[0].Ratio != "-" || r[0].VsFloor != "-" || r[0].PerHit != "-" || r[0].Median != "0.200 s" {
		t.Errorf("without native: %+v", r[0])
	}
}

func TestParseOptions(t *testing.T) {
	known := []string{"fib", "shellsort"}
	o, err := parseOptions([]string{"-n", "3", "-configs", "jump, native,jump,floor", "-skip", "fib:classic"}, known, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Reps != 3 || !slices.Equal(o.Configs, []string{cfgNative, cfgFloor, cfgJump}) || !slices.Equal(o.Workloads, known) ||
		!o.Skip["fib:classic"] || o.Timeout != 2*time.Minute || o.ServerRequests != 20000 || o.ServerConns != 4 {
		t.Errorf("options: %+v", o)
	}
	for _, bad := range [][]string{
		{"-n", "0"}, {"-configs", "native,gdb"}, {"-workloads", ""}, {"-skip", "fib"},
		{"-skip", "fob:xol"}, {"-timeout", "0s"}, {"extra"},
		{"-server-conns", "0"}, {"-server-requests", "3", "-server-conns", "4"},
	} {
		if _, err := parseOptions(bad, known, io.Discard); err == nil {
			t.Errorf("parseOptions(%q): no error", bad)
		}
	}
}

// prof is a profile with one line and one function of the executable,
// and one function of a library, with the given counts.
func prof(line, fn, lib uint64) *profile.Profile {
	return &profile.Profile{
		Lines: []profile.Line{{File: "/src/fib.c", Line: 10, Count: line}},
		Functions: []profile.Function{
			{Name: "fib", Address: 0x401136, Count: fn},
			{Name: "helper", Address: 0x1100, Count: lib, Module: "/lib/libh.so"},
		},
		Sites: []profile.Site{{Address: 0x401136, Count: fn, Kind: profile.KindFunc}, {Address: 0x401140, Count: line, Kind: profile.KindLine}},
	}
}

func TestCountChecker(t *testing.T) {
	var c countChecker
	c.add(cfgClassic, prof(5, 7, 1))
	c.add(cfgXOL, prof(5, 7, 1))
	c.add(cfgJump, prof(5, 7, 1))
	text, ok := c.verdict("fib")
	if !ok || !strings.Contains(text, "counts agree") || c.hits != 12 || c.hitsFrom != cfgXOL {
		t.Errorf("agreeing profiles: ok %v, hits %d from %s:\n%s", ok, c.hits, c.hitsFrom, text)
	}
	c.add(cfgJump, prof(5, 8, 2))
	c.add(cfgJump, prof(6, 7, 1))
	text, ok = c.verdict("fib")
	for _, want := range []string{
		"COUNTS DIFFER", "jump: 2 of 3 profiles differ; 2 of 3 lines and functions differ",
		"function fib (0x401136): 7, now 8", "function libh.so: helper (0x1100): 1, now 2",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("verdict lacks %q:\n%s", want, text)
		}
	}
	if ok {
		t.Error("differing counts: ok")
	}
}

func TestDiffCountsMissing(t *testing.T) {
	a := Counts{Lines: map[string]uint64{"a.c:1": 1, "a.c:2": 2}, Funcs: map[string]uint64{}}
	b := Counts{Lines: map[string]uint64{"a.c:2": 2, "a.c:3": 3}, Funcs: map[string]uint64{}}
	diffs, n := diffCounts(a, b, 1)
	if n != 2 || !slices.Equal(diffs, []string{"line a.c:1: 1, missing"}) {
		t.Errorf("diffCounts: %d, %q", n, diffs)
	}
}
