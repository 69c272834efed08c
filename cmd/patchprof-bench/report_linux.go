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
	var checks []string
	status := 0
	for _, wr := range wrs {
		ms := make([]Measure, len(wr.slots))
		for i, s := range wr.slots {
			ms[i] = s.Measure
		}
		rs = append(rs, rows(wr.w.Title, ms, wr.checker.hits, b.opts.Timeout)...)
		text, ok := wr.checker.verdict(wr.w.Name)
		if !ok {
			status = 1
		}
		if wr.checker.hitsFrom != "" {
			text = fmt.Sprintf("%s: %s hits (the sites' counts of the %s engine's profile)\n", wr.w.Name,
				thousands(int64(wr.checker.hits)), wr.checker.hitsFrom) + text
		}
		checks = append(checks, text)
	}
	fmt.Fprintf(w, "patchprof bench: %d runs of each configuration, interleaved; median wall time; timeout %v\n\n",
		b.opts.Reps, b.opts.Timeout)
	if err := writeTable(w, rs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	fmt.Fprintf(w, "\nns/hit over native: (median - native median) / hits\n%s", strings.Join(checks, ""))
	if status != 0 {
		fmt.Fprintln(w, "\nBENCH FOUND WRONG COUNTS OR FAILED RUNS: see above")
	}
	return status
}
