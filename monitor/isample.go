package monitor

// InterruptSampling is the ptrace fallback of CPU time sampling, for where
// the kernel refuses perf events: Rate times a second the tracer thread
// stops each thread of the target that is on a CPU or waiting for one and
// ran a period or more since its last stop (PTRACE_INTERRUPT), reads its PC
// and resumes it as it was. The thread's CPU time since its last stop (the
// kernel's count, /proc/TID/schedstat) is delivered as samples of 1/Rate s
// each at that PC, or at the PC where the time began when another stop (a
// trap, a system call) ended it. The figures are coarser than perf's (time
// in the kernel counts, and every sample is a stop of the target: see
// docs/design.md).
type InterruptSampling struct {
	// Rate is the number of sampling rounds per second.
	Rate int
	// Start is called once, on the tracer thread, after Options.OnStart
	// returned: the sampling runs only if it returns true (the profiler
	// falls back to it when perf events were refused at OnStart).
	Start func() bool
	// Deliver receives the samples of each round, on the tracer thread,
	// before any later layout is reported (Options.Layout); the slice is
	// reused after it returns.
	Deliver func([]Sample)
	// Fail, if set, is told why the sampling could not start.
	Fail func(error)
}

// A Sample is the PC of one thread interrupted on a CPU.
type Sample struct {
	PID, TID int    // process (thread group) and thread
	PC       uint64 // runtime address of the next instruction to execute
	Time     uint64 // CLOCK_MONOTONIC, nanoseconds (as sampler.Now)
}
