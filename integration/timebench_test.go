//go:build linux

package integration

import (
	"testing"
	"time"
)

// BenchmarkTimeOverhead measures what --time costs beyond the counting
// engine (the default, jump): costs.c (2.6 s of CPU-bound calls) under
// patchprof --funcs, plain, with --time (perf events at about 1 kHz) and
// with --time under the ptrace fallback, the three runs alternated in each
// iteration. It reports each sampled run's wall time over the plain run's,
// and the same for the CPU time of patchprof and the target together
// (what wait4 reports for patchprof: its own and its reaped children's).
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
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, v := range variants {
			start := time.Now()
			res := run(b, runOpts{args: append(append([]string{"--funcs"}, v.flags...), exe), env: v.env})
			wall[k] += time.Since(start)
			if res.code != 0 {
				b.Fatalf("%s run: %s", v.name, res)
			}
			cpu[k] += res.cpu
		}
	}
	b.StopTimer()
	for k, v := range variants[1:] {
		b.ReportMetric(float64(wall[k+1])/float64(wall[0]), v.name+"-wall/plain")
		b.ReportMetric(float64(cpu[k+1])/float64(cpu[0]), v.name+"-cpu/plain")
	}
	b.ReportMetric(wall[0].Seconds()/float64(b.N), "plain-s/run")
}
