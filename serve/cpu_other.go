//go:build !unix

package serve

// cpuSeconds is not measured on this system: /metrics leaves
// process_cpu_seconds_total out.
func cpuSeconds() (float64, bool) { return 0, false }
