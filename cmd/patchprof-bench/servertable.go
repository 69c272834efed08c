package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// A ServerMeasure is what the rounds of one engine gave on a server: the
// requests per second of the same bounded load before patchprof attached,
// while attached, and after the detach, one of each a round.
type ServerMeasure struct {
	// Config is the engine; Label says what ran, as the table shows it.
	Config, Label string
	// Before, Attached and After are the rounds' requests per second.
	Before, Attached, After []float64
	// TimedOut is set when a load exceeded the timeout.
	TimedOut bool
	// Note says why the engine did not run or failed; empty when it ran.
	Note string
}

// medianRate returns the median of rates (the mean of the middle two for an
// even count), or 0 for none.
func medianRate(rates []float64) float64 {
	if len(rates) == 0 {
		return 0
	}
	s := slices.Clone(rates)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// A ServerRow is one line of the servers' table, formatted.
type ServerRow struct {
	Workload, Config, Before, Attached, Drop, After, AfterDrop string
}

// serverRows formats one server's measures: the medians of each phase and
// the change of the attached and after-detach phases against the phase
// before, the "drop in requests per second". A change is the
// median of the rounds' own changes: the phases of a round run minutes
// apart from other rounds' on a machine whose load drifts, seconds apart
// from each other.
func serverRows(workload string, ms []ServerMeasure) []ServerRow {
	var out []ServerRow
	for i, m := range ms {
		r := ServerRow{Config: m.Label}
		if i == 0 {
			r.Workload = workload
		}
		switch {
		case m.Note != "":
			r.Before = m.Note
		case len(m.Before) == 0:
			r.Before = "-"
			if m.TimedOut {
				r.Before = "timed out"
			}
		default:
			r.Before = formatRate(medianRate(m.Before))
			r.Attached, r.Drop = phase(m.Attached, m.Before, m.TimedOut)
			r.After, r.AfterDrop = phase(m.After, m.Before, false)
		}
		out = append(out, r)
	}
	return out
}

// phase formats a phase's median rate and the median of its rounds'
// changes against the same rounds' rates before.
func phase(rates, before []float64, timedOut bool) (rate, change string) {
	switch {
	case len(rates) > 0:
		changes := make([]float64, len(rates))
		for i, r := range rates {
			changes[i] = r/before[i] - 1
		}
		return formatRate(medianRate(rates)), formatChange(medianRate(changes))
	case timedOut:
		return "timed out", ""
	}
	return "-", ""
}

// formatRate prints requests per second, rounded to three significant
// digits, thousands separated.
func formatRate(r float64) string {
	switch {
	case r >= 999.5:
		p := int64(1)
		for x := r; x >= 1000; x /= 10 {
			p *= 10
		}
		return thousands((int64(r+float64(p)/2) / p) * p)
	case r >= 99.95:
		return fmt.Sprintf("%.0f", r)
	case r >= 9.995:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// formatChange prints a relative change as a signed percentage.
func formatChange(c float64) string {
	return fmt.Sprintf("%+.1f%%", 100*c)
}

// writeServerTable prints the servers' rows as a Markdown table.
func writeServerTable(w io.Writer, rs []ServerRow) error {
	var b strings.Builder
	b.WriteString("| server | configuration | requests/s before | attached | change | after detach | change |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Workload, r.Config, r.Before, r.Attached, r.Drop, r.After, r.AfterDrop)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
