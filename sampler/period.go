package sampler

// DefaultRate is the sample rate of --time without --sample-rate: about
// 1 kHz, as perf record's default frequency is 4 kHz and the kernel's
// minimum hrtimer period is 10 µs.
const DefaultRate = 997 // prime, so the ticks do not beat with periodic work

// MaxRate is the highest rate Open accepts: the kernel's software clocks
// take at least 10 µs between samples (perf_swevent_set_period).
const MaxRate = 100000

// periodOf is the sample period at rate samples per second, in
// nanoseconds of the thread's CPU time.
func periodOf(rate int) uint64 {
	if rate <= 0 {
		rate = DefaultRate
	}
	return uint64(1e9) / uint64(rate)
}
