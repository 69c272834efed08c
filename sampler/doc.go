// Package sampler samples the CPU time of a process tree with Linux perf
// events (perf_event_open(2)): a software clock per task, user space only,
// each sample the interrupted instruction pointer, the process and thread,
// and the time; with a call chain, also the user stack and frame pointers
// and a copy of the user stack, for an unwinder by call frame information. It owns the events, their ring buffers and the goroutine that
// drains them; it knows nothing of what the addresses mean (the profiler
// resolves them through the monitor's layouts).
//
// Events are opened on tasks that are stopped (the started target at its
// exec stop, every thread of an attached process while all are held), with
// inherit set: the kernel gives every thread and process they create a copy
// of the event, whose samples go to the ring buffer of the event it was
// inherited from (perf_output_begin). The kernel refuses to mmap an
// inherited per-task event that is not bound to a CPU (perf_mmap: "Don't
// allow mmap() of inherited per-task counters"), so there is one event per
// task and CPU, as perf record does; the events of one CPU share the ring
// buffer of the first (PERF_EVENT_IOC_SET_OUTPUT).
//
// Files:
//
//	sampler_linux.go: Config, Stats, Sampler: Open (one event per task and
//	    CPU), the drain loop, Close, Now
//	ring_unsafe_linux.go: the mmapped ring buffers and their reading
//	record.go: Sample and the perf record format (pure)
//	period.go: DefaultRate, MaxRate and the sample period of a rate
//	errors.go: ErrUnavailable, UnavailableError, and the RefuseEnv test hook
//	unsupported.go: the same API on every other platform, where Open fails
package sampler
