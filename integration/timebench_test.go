//go:build linux

package integration

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// targetCPU reads the "cpu NS" line costs.c prints with COSTS_CPU.
var targetCPU = regexp.MustCompile(`(?m)^cpu (\d+)$`)

// BenchmarkTimeOverhead measures what --time costs beyond the counting
// engine (the default, jump): costs.c (2.6 s of CPU-bound calls) under
// patchprof --funcs, plain, with --time (perf events at about 1 kHz) and
// with --time under the ptrace fallback, the three runs alternated in each
// iteration. It reports each sampled run's wall time over the plain run's,
// the same for the CPU time of patchprof and the target together (what
// wait4 reports for patchprof: its own and its reaped children's), and the
// same for the target's own CPU time (costs.c reports it with COSTS_CPU):
// the measure, what sampling costs the program, not patchprof.
//
//	go test -run '^$' -bench TimeOverhead -benchtime 5x ./integration/
func BenchmarkTimeOverhead(b *testing.B) {
	needs(b)
	exe := buildC(b, "costs.c", "-g", "-O1", "-pthread")
	variants := []struct {
		name  string
		flags []string
		env   []string
	}{
		{"plain", nil, nil},
		{"perf", []string{"--time"}, nil},
		{"ptrace", []string{"--time"}, refusePerf},
	}
	wall := make([]time.Duration, len(variants))
	cpu := make([]time.Duration, len(variants))
	own := make([]time.Duration, len(variants))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, v := range variants {
			start := time.Now()
			env := append([]string{"COSTS_CPU=1"}, v.env...)
			res := run(b, runOpts{args: append(append([]string{"--funcs"}, v.flags...), exe), env: env})
			wall[k] += time.Since(start)
			if res.code != 0 {
				b.Fatalf("%s run: %s", v.name, res)
			}
			cpu[k] += res.cpu
			m := targetCPU.FindStringSubmatch(res.stderr)
			if m == nil {
				b.Fatalf("%s run: no cpu line from the target: %s", v.name, res)
			}
			ns, _ := strconv.ParseInt(m[1], 10, 64)
			own[k] += time.Duration(ns)
		}
	}
	b.StopTimer()
	for k, v := range variants[1:] {
		b.ReportMetric(float64(wall[k+1])/float64(wall[0]), v.name+"-wall/plain")
		b.ReportMetric(float64(cpu[k+1])/float64(cpu[0]), v.name+"-cpu/plain")
		b.ReportMetric(float64(own[k+1])/float64(own[0]), v.name+"-target-cpu/plain")
	}
	b.ReportMetric(wall[0].Seconds()/float64(b.N), "plain-s/run")
}
