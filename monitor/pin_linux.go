//go:build linux

package monitor

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Co-location. A ptrace stop hands the CPU from the target to the tracer and
// back; when the two run on different CPUs each hand-over costs a cross-CPU
// wake-up: BenchmarkEngines on the development VM measured a bare stop at
// 51.9 µs unpinned against 11.2 µs pinned (4.6x), and an unpinned run flips
// between the two. Pinning the
// tracer thread and the target to one CPU makes every stop the cheap kind.
// The price: the target's threads share that CPU, so a CPU-bound
// multi-threaded target loses its parallelism (Options.Pin is off for it).

// pinTogether puts the calling thread (the tracer, locked to its OS thread)
// and task pid (and the threads and children it creates later, which inherit
// its mask) on one CPU: the one the tracer runs on now, if allowed. It
// returns a function that gives the calling thread its former mask back.
func pinTogether(pid int) (restore func(), err error) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("read CPU affinity: %w", err)
	}
	cpu := -1
	var c, node uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptrOf(&c), uintptrOf(&node), 0); e == 0 && old.IsSet(int(c)) {
		cpu = int(c)
	}
	for k := 0; cpu < 0 && k < 1024; k++ {
		if old.IsSet(k) {
			cpu = k
		}
	}
	if cpu < 0 {
		return nil, fmt.Errorf("no CPU in the affinity mask")
	}
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return nil, fmt.Errorf("pin the tracer to CPU %d: %w", cpu, err)
	}
	restore = func() { unix.SchedSetaffinity(0, &old) }
	if err := unix.SchedSetaffinity(pid, &one); err != nil {
		restore()
		return nil, fmt.Errorf("pin the target to CPU %d: %w", cpu, err)
	}
	return restore, nil
}
