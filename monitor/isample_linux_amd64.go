//go:build linux && amd64

package monitor

import (
	"bytes"
	"errors"
	"fmt"
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
// loop runs the round. Each thread earns credit as it uses CPU time (the
// kernel's count of its time on a CPU, /proc/TID/schedstat, proc(5)); a thread
// with a period of credit or more that the kernel has on a CPU or its run
// queue (state R in /proc/TID/stat) is interrupted (PTRACE_INTERRUPT), owed
// one sample per period of its credit. So the samples add up to the CPU time
// the threads used, as the perf task clock's do, and a thread waiting for a
// CPU earns nothing.
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
// without sampling; the thread's credit is kept for a later round.
//
// Threads asleep in a system call are never interrupted: a stop would end
// some calls with EINTR (epoll_wait, as a debugger's attach does), and their
// credit waits until they run. A thread in state R may be in the kernel; its
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
	ran         uint64   // its time on a CPU at the last round, ns
	credit      uint64   // CPU time not yet sampled, ns
	owed        int      // samples its pending interrupt stands for; 0: none pending
}

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

// sampleRound interrupts every thread on a CPU that has a period of
// credit or more; their stops come to handle.
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
		if x == nil || x.owed > 0 || !s.earn(x) || !s.onCPU(x) {
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
		x.owed = int(x.credit / s.period)
		x.credit -= uint64(x.owed) * s.period
	}
	if s.rounds%64 == 0 {
		s.prune(m)
	}
}

// sampled takes the samples a thread owes when ev is the stop of its
// interrupt, and resumes it; it reports false for any other event, which
// the caller handles (the thread's credit is kept).
//
// Preconditions: on the tracer thread, in the main loop (handle).
func (m *mon) sampled(ev event) bool {
	s := m.isamp
	x := s.ts[ev.tid]
	if x == nil || x.owed == 0 {
		return false
	}
	n := x.owed
	x.owed = 0
	t := m.threads[ev.tid]
	st := decodeStatus(ev.ws)
	if t == nil || st.kind != stopEvent || st.sig != unix.SIGTRAP || t.fresh || t.groupStop || t.state == listening {
		x.credit += uint64(n) * s.period
		return false
	}
	// What dispatch does for an interrupt stop of a running thread
	// (eventStop has nothing else to do for it).
	t.kicked = false
	t.state = stopped
	t.inSyscall = false
	t.atEntry = false
	pc, err := peekUser(t.tid, offRip)
	if err == nil && s.o.Deliver != nil {
		s.one[0] = Sample{PID: t.tgid, TID: t.tid, PC: pc, Time: monotonic()}
		for ; n > 0; n-- {
			s.o.Deliver(s.one[:])
		}
	} else if err != nil && !gone(err) {
		m.lose(fmt.Errorf("read the PC of thread %d to sample it: %w", t.tid, err))
	}
	m.resume(t, 0)
	return true
}

// forget drops the interrupt pending for tid, whose stop was taken by
// someone else (stopOthers absorbs it): its credit is kept.
func (s *isampler) forget(tid int) {
	if x := s.ts[tid]; x != nil && x.owed > 0 {
		x.credit += uint64(x.owed) * s.period
		x.owed = 0
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
	sched, err := os.Open(dir + "schedstat")
	if err != nil {
		stat.Close()
		return nil
	}
	x := &tsample{stat: stat, sched: sched}
	// Time used before the sampling began (an attached process) is not
	// sampled.
	x.ran, _ = s.ranOf(x)
	s.ts[t.tid] = x
	return x
}

// earn adds the CPU time x's thread used since the last round to its
// credit, and reports whether a sample is due.
func (s *isampler) earn(x *tsample) bool {
	ran, ok := s.ranOf(x)
	if !ok {
		return false
	}
	if ran > x.ran {
		x.credit += ran - x.ran
		// A thread asleep with credit keeps at most a second of it.
		x.credit = min(x.credit, uint64(time.Second))
	}
	x.ran = ran
	return x.credit >= s.period
}

// ranOf reads the thread's time on a CPU, in ns: the first field of
// /proc/TID/schedstat.
func (s *isampler) ranOf(x *tsample) (uint64, bool) {
	n, _ := x.sched.ReadAt(s.b[:], 0)
	f, _, _ := bytes.Cut(s.b[:n], []byte{' '})
	v, err := strconv.ParseUint(string(f), 10, 64)
	return v, err == nil
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
