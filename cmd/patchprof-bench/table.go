package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// A Measure is what the runs of one configuration on one workload gave.
type Measure struct {
	// Config is the configuration's name; Label says what it ran, as the
	// table shows it ("gcov (gcc --coverage)").
	Config, Label string
	// Times are the wall times of the runs that completed.
	Times []time.Duration
	// RSS are those runs' peak resident memory in KiB: the largest of the
	// command and the processes it waited for (wait4's ru_maxrss), so
	// for patchprof the larger of patchprof and its target; only the
	// runs whose peak was above the bench's own (timed).
	RSS []int64
	// TimedOut is set when a run exceeded the timeout.
	TimedOut bool
	// Note says why the configuration did not run or failed; empty when
	// it ran.
	Note string
}

// median returns the median of the times (the mean of the middle two for
// an even count), or 0 for none.
func median(times []time.Duration) time.Duration {
	if len(times) == 0 {
		return 0
	}
	s := slices.Clone(times)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// A Row is one line of the table, formatted.
type Row struct {
	Workload, Config, Median, Ratio, VsFloor, PerHit, RSS string
}

// rows formats one workload's measures. The native measure, if any, is the
// base of the ratios and of the cost per hit; hits is the number of events
// the profile counts (0: unknown).
//
// The floor measure, if any, is the base of a second ratio: what a
// configuration costs over the bare ptrace tracer (the goal for a
// Go program is stated against it).
func rows(workload string, ms []Measure, hits uint64, timeout time.Duration) []Row {
	var native, floor time.Duration
	for _, m := range ms {
		if m.Note != "" || m.TimedOut {
			continue
		}
		switch m.Config {
		case cfgNative:
			native = median(m.Times)
		case cfgFloor:
			floor = median(m.Times)
		}
	}
	var out []Row
	for i, m := range ms {
		r := Row{Config: m.Label, Median: "-", Ratio: "-", VsFloor: "-", PerHit: "-", RSS: "-"}
		if i == 0 {
			r.Workload = workload
		}
		switch {
		case m.Note != "":
			r.Median = m.Note
			r.Ratio, r.VsFloor, r.PerHit, r.RSS = "", "", "", ""
		case m.TimedOut:
			r.Median = ">" + formatSeconds(timeout)
			if native > 0 {
				r.Ratio = ">" + formatRatio(float64(timeout)/float64(native))
			}
			if floor > 0 {
				r.VsFloor = ">" + formatRatio(float64(timeout)/float64(floor))
			}
		default:
			med := median(m.Times)
			r.Median = formatSeconds(med)
			if len(m.RSS) > 0 {
				r.RSS = formatMiB(medianKiB(m.RSS))
			}
			if native > 0 {
				r.Ratio = formatRatio(float64(med) / float64(native))
			}
			if floor > 0 {
				r.VsFloor = formatRatio(float64(med) / float64(floor))
			}
			// The floor counts nothing: its time over native is
			// no cost per hit.
			if m.Config != cfgNative && m.Config != cfgFloor && native > 0 && hits > 0 {
				r.PerHit = formatNs(float64(med-native) / float64(hits))
			}
		}
		out = append(out, r)
	}
	return out
}

// medianKiB returns the median of sizes (the mean of the middle two for
// an even count).
func medianKiB(sizes []int64) int64 {
	s := slices.Clone(sizes)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// formatMiB prints a size in KiB as MiB with one decimal.
func formatMiB(kib int64) string {
	return fmt.Sprintf("%.1f MiB", float64(kib)/1024)
}

// formatSeconds prints a duration in seconds with three significant
// digits or more.
func formatSeconds(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 1:
		return fmt.Sprintf("%.3f s", s)
	case s < 10:
		return fmt.Sprintf("%.2f s", s)
	case s < 100:
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.0f s", s)
}

// formatRatio prints a ratio to native with three significant digits, and
// thousands separated.
func formatRatio(r float64) string {
	switch {
	case r < 10:
		return fmt.Sprintf("%.2fx", r)
	case r < 100:
		return fmt.Sprintf("%.1fx", r)
	}
	return thousands(int64(r+0.5)) + "x"
}

// formatNs prints a cost per hit in nanoseconds.
func formatNs(ns float64) string {
	if ns > -10 && ns < 10 {
		return fmt.Sprintf("%.1f", ns)
	}
	return thousands(int64(ns + 0.5))
}

// thousands prints n with commas between groups of three digits.
func thousands(n int64) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// writeTable prints the rows as a Markdown table, ready for README.md.
func writeTable(w io.Writer, rs []Row) error {
	var b strings.Builder
	b.WriteString("| workload | configuration | median | vs native | vs floor | ns/hit over native | peak RSS |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Workload, r.Config, r.Median, r.Ratio, r.VsFloor, r.PerHit, r.RSS)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
