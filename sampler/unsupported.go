//go:build !linux

package sampler

import "errors"

// A Sampler samples a process tree; on this platform Open always fails.
type Sampler struct{}

// Config says how to sample: see the Linux version.
type Config struct {
	Rate      int
	Deliver   func([]Sample)
	Callchain bool
}

// Stats are what a sampler counted beside the samples.
type Stats struct {
	Lost uint64
}

// Open returns an *UnavailableError: perf events are Linux's.
func Open(tids []int, c Config) (*Sampler, error) {
	return nil, &UnavailableError{Err: errors.ErrUnsupported}
}

// Period returns the CPU time one sample stands for at rate samples per
// second, in nanoseconds.
func Period(rate int) uint64 { return periodOf(rate) }

// Close does nothing.
func (s *Sampler) Close() (Stats, error) { return Stats{}, nil }

// Now returns 0: there are no samples to stamp.
func Now() uint64 { return 0 }
