package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// report prints the table and the checks, and returns the exit status: 1
// when a count differed or a run misbehaved.
func (b *bench) report(w io.Writer, wrs []*workloadRun) int {
	var rs []Row
	var srs []ServerRow
	var suiteRows []SuiteRow
	var checks []string
	status := 0
	var watches []*workloadRun
	var pauses []*workloadRun
	for _, wr := range wrs {
		if wr.w.Pause {
			pauses = append(pauses, wr)
			text, ok := b.pauseVerdict(wr)
			if !ok {
				status = 1
			}
			checks = append(checks, text)
			continue
		}
		if wr.w.Idle > 0 {
			watches = append(watches, wr)
			text, ok := b.watchVerdict(wr)
			if !ok {
				status = 1
			}
			checks = append(checks, text)
			continue
		}
		if wr.w.Handler != "" {
			text, ok := b.serverVerdict(wr)
			if !ok {
				status = 1
			}
			checks = append(checks, text)
			ms := make([]ServerMeasure, len(wr.servers))
			for i, s := range wr.servers {
				ms[i] = s.ServerMeasure
			}
			srs = append(srs, serverRows(wr.w.Title, ms)...)
			continue
		}
		ms := make([]Measure, len(wr.slots))
		for i, s := range wr.slots {
			ms[i] = s.Measure
		}
		rs = append(rs, rows(wr.w.Title, ms, wr.checker.hits, b.opts.Timeout)...)
		if wr.w.Suite != nil {
			suiteRows = append(suiteRows, suiteRow(wr.w, ms, wr.checker.hits, wr.traps, b.opts.Timeout))
		}
		text, ok := wr.checker.verdict(wr.w.Name)
		if wr.w.Start && ok {
			text = wr.w.Name + ": counts nothing: patchprof's start against a Go program's\n"
		}
		if !ok {
			status = 1
		}
		if wr.checker.hitsFrom != "" {
			text = fmt.Sprintf("%s: %s hits (the sites' counts of the %s engine's profile)\n", wr.w.Name,
				thousands(int64(wr.checker.hits)), wr.checker.hitsFrom) + text
		}
		if wr.hasTraps {
			text = suiteNote(wr.w.Name, wr.checker.hits, wr.traps, wr.reasons) + text
		}
		checks = append(checks, text)
	}
	fmt.Fprintf(w, "patchprof bench: %d runs of each configuration, interleaved; median wall time; timeout %v\n\n",
		b.opts.Reps, b.opts.Timeout)
	if len(rs) > 0 {
		if err := writeTable(w, rs); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		fmt.Fprintf(w, "\nns/hit over native: (median - native median) / hits\n\n")
	}
	if len(suiteRows) > 0 {
		fmt.Fprintf(w, "Test suites: native median, gcov and patchprof (jump) as ratios to it; traps and hits of the first jump run\n\n")
		if err := writeSuiteTable(w, suiteRows); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		fmt.Fprintln(w)
	}
	if len(srs) > 0 {
		fmt.Fprintf(w, "Servers attached to with -p: %d requests over %d keep-alive connections in each phase, median requests/s\n\n",
			b.opts.ServerRequests, b.opts.ServerConns)
		if err := writeServerTable(w, srs); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		fmt.Fprintln(w)
	}
	for _, wr := range watches {
		b.writeWatchTable(w, wr)
	}
	for _, wr := range pauses {
		b.writePauseTable(w, wr)
	}
	fmt.Fprint(w, strings.Join(checks, ""))
	if status != 0 {
		fmt.Fprintln(w, "\nBENCH FOUND WRONG COUNTS OR FAILED RUNS: see above")
	}
	return status
}

// watchVerdict says in one line what the watch's rounds checked; ok is
// false when a round went wrong.
func (b *bench) watchVerdict(wr *workloadRun) (text string, ok bool) {
	var sb strings.Builder
	for _, s := range wr.watches {
		if s.Exact > 0 {
			fmt.Fprintf(&sb, "%s: counts exact: watch %s, %d rounds: work counted 100 times in each of the %d processes after the window\n",
				wr.w.Name, s.label(), s.Exact, wr.w.Idle)
		}
	}
	for _, p := range wr.checker.problems {
		fmt.Fprintf(&sb, "%s: RUN FAILED OR MISBEHAVED: %s\n", wr.w.Name, strings.ReplaceAll(strings.TrimSpace(p), "\n", "\n    "))
	}
	return sb.String(), len(wr.checker.problems) == 0
}

// serverVerdict says in one line what a server's rounds checked; ok is
// false when a round went wrong.
func (b *bench) serverVerdict(wr *workloadRun) (text string, ok bool) {
	var rounds []string
	for _, s := range wr.servers {
		if n := len(s.Attached); n > 0 {
			rounds = append(rounds, fmt.Sprintf("%s %d", s.Config, n))
		}
	}
	var sb strings.Builder
	switch {
	case len(wr.servers) == 0:
		fmt.Fprintf(&sb, "%s: no engine among -configs: the server was not attached to\n", wr.w.Name)
	case len(rounds) > 0:
		fmt.Fprintf(&sb, "%s: counts exact: in every round (%s) %s was counted once per request made while attached; "+
			"after each detach no tracer, the executable mappings as before, the code as its files have it, "+
			"and the server answered every request and counted them all\n", wr.w.Name, strings.Join(rounds, ", "), wr.w.Handler)
	}
	for _, p := range wr.checker.problems {
		fmt.Fprintf(&sb, "%s: RUN FAILED OR MISBEHAVED: %s\n", wr.w.Name, strings.ReplaceAll(strings.TrimSpace(p), "\n", "\n    "))
	}
	return sb.String(), len(wr.checker.problems) == 0
}
