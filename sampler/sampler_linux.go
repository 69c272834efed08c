//go:build linux

package sampler

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Config says how to sample.
type Config struct {
	// Rate is the number of samples per second of a thread's CPU time
	// (0: DefaultRate).
	Rate int
	// Deliver receives the samples, in batches, on the sampler's own
	// goroutine; the slice is reused after it returns.
	Deliver func([]Sample)
	// Callchain asks for each sample's user call chain (Sample.Callers,
	// Sample.Top): PERF_SAMPLE_CALLCHAIN, unwound by the kernel through
	// frame pointers, kernel frames excluded; and what an unwinder by call
	// frame information needs (Sample.SP, BP, Stack): the user registers
	// (PERF_SAMPLE_REGS_USER) and a copy of the user stack from the stack
	// pointer up (PERF_SAMPLE_STACK_USER, stackDump bytes at most).
	Callchain bool
}

// Stats are what a sampler counted beside the samples.
type Stats struct {
	// Lost is how many samples the kernel dropped because a ring buffer
	// was full (PERF_RECORD_LOST).
	Lost uint64
}

// A Sampler holds the perf events of one profiled process tree and drains
// their ring buffers.
type Sampler struct {
	cfg   Config
	fds   []int
	rings []*ring // one per CPU
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex // serialises drains: the goroutine's and Close's
	buf   []Sample
	stats Stats
	err   error // the first record that could not be read
}

// drainEvery is how often the goroutine empties the ring buffers: at 1 kHz
// on one CPU a sample is 32 bytes, so a ring holds seconds of samples;
// with a call chain (Config.Callchain) at most about 1 KiB (the kernel's
// 127 frames) and the stack's copy (stackDump), so a ring holds about
// 50 ms of samples at 1 kHz, two drains.
const drainEvery = 25 * time.Millisecond

// ringPages is the size of each ring buffer's data area, in pages (a power
// of two, perf_event_open(2)): 512 KiB, the most an unprivileged user may
// lock per CPU by default (perf_event_mlock_kb, 516 KiB with the
// metadata page).
const ringPages = 128

// stackDump is how much of the user stack a sample copies at rate samples
// per second: the room a ring has per sample at two drains' worth of
// samples, less the call chain's, at most 8 KiB (perf record's default for
// --call-graph dwarf) and at least a word (the top, Sample.Top).
func stackDump(rate int) uint32 {
	room := ringPages * 4096 / 2 / max(1, rate*int(drainEvery/time.Millisecond)/1000)
	room -= 1100
	return uint32(min(8192, max(8, room&^7)))
}

// Open opens a sampling event on every task in tids (which must not run
// new threads or processes meanwhile: hold them stopped) and every CPU,
// inherited by the tasks they create, and starts draining them. It fails
// with an *UnavailableError when the kernel refuses perf events.
func Open(tids []int, c Config) (*Sampler, error) {
	if os.Getenv(RefuseEnv) != "" {
		return nil, &UnavailableError{Err: unix.EACCES}
	}
	if c.Rate <= 0 {
		c.Rate = DefaultRate
	}
	if c.Rate > MaxRate {
		return nil, fmt.Errorf("sample rate %d Hz: at most %d", c.Rate, MaxRate)
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	s := &Sampler{cfg: c, stop: make(chan struct{}), done: make(chan struct{})}
	s.rings = make([]*ring, len(cpus))
	for _, tid := range tids {
		for k, cpu := range cpus {
			fd, err := openEvent(tid, cpu, c.Rate, c.Callchain)
			if err != nil {
				s.closeAll()
				return nil, err
			}
			s.fds = append(s.fds, fd)
			if s.rings[k] == nil {
				r, err := mapRing(fd, ringPages)
				if err != nil {
					s.closeAll()
					return nil, fmt.Errorf("map the ring buffer of CPU %d: %w", cpu, err)
				}
				s.rings[k] = r
				continue
			}
			// Events on one CPU write to that CPU's first ring.
			if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, s.rings[k].fd); err != nil {
				s.closeAll()
				return nil, fmt.Errorf("share the ring buffer of CPU %d: %w", cpu, err)
			}
		}
	}
	go s.loop()
	return s, nil
}

// Period returns the CPU time one sample stands for at rate samples per
// second, in nanoseconds.
func Period(rate int) uint64 { return periodOf(rate) }

// openEvent opens the sampling event of one task on one CPU.
func openEvent(tid, cpu, rate int, callchain bool) (int, error) {
	attr := unix.PerfEventAttr{
		Type: unix.PERF_TYPE_SOFTWARE,
		// The task clock advances only while the task runs: a thread
		// stopped by ptrace, or waiting, is not sampled.
		Config:      unix.PERF_COUNT_SW_TASK_CLOCK,
		Sample:      periodOf(rate),
		Sample_type: unix.PERF_SAMPLE_IP | unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME,
		// User space only: a tick in the kernel (a system call, our traps'
		// signal delivery and ptrace stops) is dropped, not charged to the
		// user instruction (perf_swevent_hrtimer, perf_exclude_event).
		Bits:    unix.PerfBitInherit | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv | unix.PerfBitUseClockID,
		Clockid: unix.CLOCK_MONOTONIC,
	}
	if callchain {
		// The registers and stack an unwinder by call frame
		// information reads, where frame pointers are not kept; the word
		// at the stack pointer alone tells the caller of a function that
		// pushed nothing.
		attr.Sample_type |= unix.PERF_SAMPLE_CALLCHAIN | unix.PERF_SAMPLE_REGS_USER | unix.PERF_SAMPLE_STACK_USER
		attr.Sample_regs_user = userRegs
		attr.Sample_stack_user = stackDump(rate)
		attr.Bits |= unix.PerfBitExcludeCallchainKernel
	}
	attr.Size = uint32(unsafeSizeofAttr)
	fd, err := unix.PerfEventOpen(&attr, tid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		switch {
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM), errors.Is(err, unix.ENOENT),
			errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
			return -1, &UnavailableError{Err: err}
		case errors.Is(err, unix.ESRCH):
			return -1, fmt.Errorf("sample thread %d: it is gone: %w", tid, err)
		}
		return -1, fmt.Errorf("perf_event_open for thread %d on CPU %d: %w", tid, cpu, err)
	}
	return fd, nil
}

// onlineCPUs returns the CPUs the kernel runs tasks on
// (/sys/devices/system/cpu/online: "0-3,5"), or 0 to NumCPU-1 when that
// file cannot be read.
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("list the online CPUs: %w", err)
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

// parseCPUList reads a kernel CPU list ("0-3,5").
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("CPU list %q: no CPU", s)
	}
	return out, nil
}

// loop drains the rings every drainEvery until Close.
func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(drainEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.drain()
		}
	}
}

// drain reads every ring and delivers the samples.
func (s *Sampler) drain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rings {
		s.buf = s.buf[:0]
		var err error
		s.buf, err = r.read(s.buf, s.cfg.Callchain, &s.stats.Lost)
		if err != nil && s.err == nil {
			s.err = err
		}
		if len(s.buf) > 0 && s.cfg.Deliver != nil {
			s.cfg.Deliver(s.buf)
		}
		r.release()
	}
}

// Close stops sampling, delivers what the rings still hold (the tasks may
// have ended: their samples stay readable until the events are closed), and
// releases the events.
func (s *Sampler) Close() (Stats, error) {
	for _, fd := range s.fds {
		unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, 0)
	}
	close(s.stop)
	<-s.done
	s.drain()
	err := s.closeAll()
	return s.stats, errors.Join(s.err, err)
}

// closeAll unmaps the rings and closes the events.
func (s *Sampler) closeAll() error {
	var errs []error
	for _, r := range s.rings {
		if r != nil {
			errs = append(errs, r.unmap())
		}
	}
	s.rings = nil
	for _, fd := range s.fds {
		errs = append(errs, unix.Close(fd))
	}
	s.fds = nil
	return errors.Join(errs...)
}

// Now returns the clock samples are stamped with (CLOCK_MONOTONIC), in
// nanoseconds: a layout stamped with Now while the process is stopped
// divides its samples into those before and after.
func Now() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano())
}
