//go:build linux && amd64

package monitor

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Interrupt sampling (Options.Interrupt): the fallback of CPU time sampling
// where perf events are refused. A goroutine ticks Rate times a second: it
// marks a round due and sends tickSignal to the tracer thread, which ends
// the main loop's wait4 (tick_unsafe_linux_amd64.go). Between events, the
// loop runs the round: every thread the kernel has on a CPU or its run
// queue (state R in /proc/TID/stat) that ran a period or more since its
// last stop is interrupted (PTRACE_INTERRUPT), its PC read at the stop and
// the thread resumed. The count the round reads of a running thread may be
// up to a scheduler tick old; such a thread is then stopped once a tick
// (4 ms at HZ=250), and its sample weighs the ticks' worth.
//
// What a sample weighs. The kernel counts each thread's time on a CPU
// (/proc/TID/schedstat, proc(5)); the tracer reads it whenever the thread
// is stopped, where it is exact (a running thread's count moves only at
// ticks and context switches). The time a thread ran between two of its
// stops is a run, and each run is given, as samples of one period each, to
// one PC: so the samples add up to the CPU time the threads used, as the
// perf task clock's do, and a thread waiting for a CPU earns nothing. A
// fraction of a period is given as one sample with that probability, so
// that no time crosses from one run to the next.
//
// Which PC a run gets. A run that ends at a sample's stop goes to that
// sample's PC; a run that ends at any other stop (a trap at a site, a
// system call, a signal) goes to the PC where it began: its last sample's,
// or the PC the tracer resumed it at. The other stops are where the program
// is, not where the time was: the first run's time belongs before them, the
// next one's after. Given to the PC at its end, a run cut by a trap at a
// function's entry credits that function with its caller's time.
//
// Where a sample's PC may be. A running thread stops at once, wherever it
// is; a thread waiting on a run queue stops only when it next runs, at the
// PC where it last left its CPU. That is a fair sample when the scheduler
// took the CPU (a tick, a wake-up: times that know nothing of the
// program), and a biased one when the tracer left it there: after the
// tracer resumes a thread from a stop, it often waits for a CPU at the very
// PC it was resumed at. So a round interrupts a thread only if the kernel
// put it on a CPU since the tracer last resumed it (the third field of
// schedstat has grown).
//
// Both rules answer a measured bias (docs/design.md, "The ptrace
// fallback"): on integration/testdata/costs.c (four threads calling once
// and thrice, a trap at each entry, three busy loops beside them), 10% of
// the stops landed on the out-of-line copies of the two entries'
// instructions, where the threads waited after their traps, each given the
// time of the function before; thrice/once came out 3.1 to 3.7 for 3.0.
//
// The round does not wait for the stops: they come to the main loop as
// events (handle), possibly after other threads' events. When a sampled
// thread's next stop is the interrupt's (PTRACE_EVENT_STOP with SIGTRAP,
// which a running thread reports for nothing else), its PC is read and it
// is resumed as the main loop resumes any thread after such a stop, with
// PTRACE_SYSCALL and no signal: nothing of the program's state was touched.
// Any other stop that comes first (a trap at a site, a signal, a system call
// stop, an exit) satisfies the interrupt (ptrace ends a pending interrupt
// with any stop, kernel/signal.c ptrace_stop) and is handled as it would be
// without sampling; its resume ends the run.
//
// Threads asleep in a system call are never interrupted: a stop would end
// some calls with EINTR (epoll_wait, as a debugger's attach does), and their
// sleep is no CPU time. A thread in state R may be in the kernel; its
// sample's PC is then where it returns to user space.

// errTick is the main loop's wait ended by a tick.
var errTick = errors.New("sampling round due")

// An isampler is the state of interrupt sampling in one run.
type isampler struct {
	o      *InterruptSampling
	period uint64      // ns of CPU time per sample
	due    atomic.Bool // a round is due
	stop   chan struct{}
	done   chan struct{}
	ts     map[int]*tsample // by thread
	one    [1]Sample
	b      [512]byte
	rounds int
}

// A tsample is what interrupt sampling keeps of one thread.
type tsample struct {
	stat, sched *os.File // /proc/TGID/task/TID/stat and schedstat, kept open
	base        uint64   // its time on a CPU when its run began, ns
	pc          uint64   // where its run began: its last sample, or where it was resumed
	hasPC       bool     // pc is known
	pending     bool     // an interrupt is pending
	own         bool     // the tracer resumes it from its sample's stop
	resumed     uint64   // its arrivals on a CPU when the tracer last resumed it
}

// notResumed is tsample.resumed for a thread the tracer has not resumed
// since sampling first saw it: no count of arrivals.
const notResumed = ^uint64(0)

// A sched is /proc/TID/schedstat: the thread's time on a CPU and waiting
// for one (ns), and its arrivals on a CPU (the times the kernel put it on
// one, pcount).
type sched struct{ ran, waited, arrivals uint64 }

// startSampling starts interrupt sampling if o.Interrupt asks for it.
//
// Preconditions: on the locked tracer thread, after OnStart.
func (m *mon) startSampling() {
	is := m.o.Interrupt
	if is == nil || is.Rate <= 0 || (is.Start != nil && !is.Start()) {
		return
	}
	if err := setupTickSignal(); err != nil {
		if is.Fail != nil {
			is.Fail(fmt.Errorf("sample by interrupting threads: %w", err))
		}
		return
	}
	s := &isampler{o: is, period: uint64(time.Second) / uint64(is.Rate),
		stop: make(chan struct{}), done: make(chan struct{}), ts: map[int]*tsample{}}
	pid, tid := unix.Getpid(), unix.Gettid()
	period := time.Second / time.Duration(is.Rate)
	go func() {
		defer close(s.done)
		tk := time.NewTicker(period)
		defer tk.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tk.C:
				s.due.Store(true)
				unix.Tgkill(pid, tid, tickSignal)
			}
		}
	}()
	m.isamp = s
}

// stopSampling stops the ticks and closes the files sampling opened.
func (m *mon) stopSampling() {
	s := m.isamp
	if s == nil {
		return
	}
	close(s.stop)
	<-s.done
	for tid, x := range s.ts {
		x.close()
		delete(s.ts, tid)
	}
	m.isamp = nil
}

// waitOrTick is the main loop's wait: wait4 for any task, ended early by a
// tick (errTick).
//
// Preconditions: on the tracer thread.
func (m *mon) waitOrTick() (event, error) {
	var ws unix.WaitStatus
	for {
		tid, err := unix.Wait4(-1, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			if m.isamp.due.Load() {
				return event{}, errTick
			}
			continue
		}
		return event{tid: tid, ws: ws}, err
	}
}

// sampleRound interrupts every thread on a CPU or its run queue that the
// kernel put on a CPU since the tracer last resumed it, and whose run holds
// a period or more; their stops come to handle.
//
// Preconditions: on the tracer thread, in the main loop, between events.
func (m *mon) sampleRound() {
	s := m.isamp
	s.rounds++
	for _, t := range m.threads {
		if !t.runsCode() || t.fresh || t.mm.dead {
			continue
		}
		x := s.of(t)
		if x == nil || x.pending || !s.onCPU(x) {
			continue
		}
		// Not run since resumed: it waits where the tracer left it. Less
		// than a period in its run: the stop would cost more than it tells.
		if at, ok := s.read(x); !ok || at.arrivals == x.resumed || at.ran < x.base+s.period {
			continue
		}
		// A thread that is gone answers ESRCH; its exit report comes.
		t.kicked = true
		if err := interrupt(t.tid); err != nil {
			if !gone(err) {
				m.lose(fmt.Errorf("interrupt thread %d to sample it: %w", t.tid, err))
			}
			continue
		}
		x.pending = true
	}
	if s.rounds%64 == 0 {
		s.prune(m)
	}
}

// sampled gives a thread's run to its PC when ev is the stop of its
// interrupt, and resumes it; it reports false for any other event, which
// the caller handles (its resume ends the run: resumed).
//
// Preconditions: on the tracer thread, in the main loop (handle).
func (m *mon) sampled(ev event) bool {
	s := m.isamp
	x := s.ts[ev.tid]
	if x == nil || !x.pending {
		return false
	}
	x.pending = false
	t := m.threads[ev.tid]
	st := decodeStatus(ev.ws)
	if t == nil || st.kind != stopEvent || st.sig != unix.SIGTRAP || t.fresh || t.groupStop || t.state == listening {
		return false
	}
	// What dispatch does for an interrupt stop of a running thread
	// (eventStop).
	if t.kicked && t.untraced {
		m.unkickAtStop(t)
	}
	t.kicked = false
	t.state = stopped
	t.inSyscall = false
	t.atEntry = false
	pc, err := peekUser(t.tid, offRip)
	if err != nil && !gone(err) {
		m.lose(fmt.Errorf("read the PC of thread %d to sample it: %w", t.tid, err))
	}
	// The ptrace request waited for the thread to leave its CPU
	// (ptrace_check_attach, wait_task_inactive): its time there is exact.
	if now, ok := s.read(x); ok && err == nil {
		s.deliver(t, x, now.ran, pc)
		x.pc, x.hasPC = pc, true
		x.own = true // it resumes where the sample is
	}
	m.resume(t, 0)
	return true
}

// resumed ends t's run at a stop that was not a sample's, giving it to the
// PC where it began, and begins the next at the PC the tracer resumes it
// at. It costs a read of schedstat and of the PC at each such resume of a
// thread sampling has seen.
//
// Preconditions: on the tracer thread; t is stopped, about to be resumed.
func (m *mon) resumed(t *thread) {
	s := m.isamp
	x := s.ts[t.tid]
	if x == nil {
		return
	}
	now, ok := s.read(x)
	if !ok {
		return
	}
	x.resumed = now.arrivals
	if x.own {
		x.own = false
		return
	}
	if x.hasPC {
		s.deliver(t, x, now.ran, x.pc)
	} // else its first run, begun nowhere known, joins the next
	pc, err := peekUser(t.tid, offRip)
	x.pc, x.hasPC = pc, err == nil
}

// deliver gives the time x's thread ran since its run began (ran, the
// kernel's count now) as samples at pc, one per period; the last fraction
// of a period is one more sample with that probability, so the samples
// stand for the time in expectation and nothing is carried to the next run.
func (s *isampler) deliver(t *thread, x *tsample, ran, pc uint64) {
	if ran <= x.base {
		return
	}
	d := ran - x.base
	x.base = ran
	n := d / s.period
	if rand.Uint64N(s.period) < d%s.period {
		n++
	}
	if n == 0 || s.o.Deliver == nil {
		return
	}
	s.one[0] = Sample{PID: t.tgid, TID: t.tid, PC: pc, Time: monotonic()}
	for ; n > 0; n-- {
		s.o.Deliver(s.one[:])
	}
}

// forget drops the interrupt pending for tid, whose stop was taken by
// someone else (stopOthers absorbs it); its resume ends its run.
func (s *isampler) forget(tid int) {
	if x := s.ts[tid]; x != nil {
		x.pending = false
	}
}

// of returns what is kept of t, opening its files at its first round; nil
// when they cannot be opened (it is gone).
func (s *isampler) of(t *thread) *tsample {
	if x := s.ts[t.tid]; x != nil {
		return x
	}
	dir := "/proc/" + strconv.Itoa(t.tgid) + "/task/" + strconv.Itoa(t.tid) + "/"
	stat, err := os.Open(dir + "stat")
	if err != nil {
		return nil
	}
	sc, err := os.Open(dir + "schedstat")
	if err != nil {
		stat.Close()
		return nil
	}
	// Not resumed by the tracer since it was first seen: a thread alone on
	// its CPU may not leave it for a long time.
	x := &tsample{stat: stat, sched: sc, resumed: notResumed}
	// Time used before the sampling began (an attached process) is not
	// sampled.
	at, _ := s.read(x)
	x.base = at.ran
	s.ts[t.tid] = x
	return x
}

// read reads the thread's /proc/TID/schedstat.
func (s *isampler) read(x *tsample) (sched, bool) {
	n, _ := x.sched.ReadAt(s.b[:], 0)
	return parseSchedstat(s.b[:n])
}

// parseSchedstat parses the three decimal fields of a schedstat line
// ("ran waited arrivals\n", Documentation/scheduler/sched-stats.rst),
// without allocating.
func parseSchedstat(b []byte) (sched, bool) {
	var v [3]uint64
	for k := range v {
		for len(b) > 0 && b[0] == ' ' {
			b = b[1:]
		}
		d := 0
		for ; d < len(b) && b[d] >= '0' && b[d] <= '9'; d++ {
			c := uint64(b[d] - '0')
			if v[k] > (1<<64-1-c)/10 {
				return sched{}, false
			}
			v[k] = v[k]*10 + c
		}
		if d == 0 {
			return sched{}, false
		}
		b = b[d:]
	}
	return sched{ran: v[0], waited: v[1], arrivals: v[2]}, true
}

// onCPU reports whether the kernel has x's thread running or runnable
// (state R in /proc/TGID/task/TID/stat, proc(5)).
func (s *isampler) onCPU(x *tsample) bool {
	n, _ := x.stat.ReadAt(s.b[:], 0)
	return statRunning(s.b[:n])
}

// statRunning reads the state field of a /proc/PID/stat line: the first
// after the command name, which is in parentheses and may hold any byte.
func statRunning(b []byte) bool {
	k := bytes.LastIndexByte(b, ')')
	return k >= 0 && k+2 < len(b) && b[k+2] == 'R'
}

// prune forgets the threads that are gone.
func (s *isampler) prune(m *mon) {
	for tid, x := range s.ts {
		if m.threads[tid] == nil {
			x.close()
			delete(s.ts, tid)
		}
	}
}

func (x *tsample) close() {
	x.stat.Close()
	x.sched.Close()
}

// monotonic returns CLOCK_MONOTONIC in nanoseconds, the clock the sampler
// package stamps samples and layouts with.
func monotonic() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano())
}
