//go:build unix

package serve

import "syscall"

// cpuSeconds returns the user and system CPU time of patchprof, every
// thread included (getrusage(2), RUSAGE_SELF).
func cpuSeconds() (float64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime), true
}
