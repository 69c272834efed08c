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
// loop runs the round: every thread that runs code and that the kernel has
// on a CPU or its run queue (state R in /proc/TID/stat) is interrupted
// (PTRACE_INTERRUPT), and each one's next stop is awaited. When that stop is
// the interrupt's (PTRACE_EVENT_STOP with SIGTRAP, which a running thread
// reports for nothing else), its PC is read and it is resumed as the main
// loop resumes any thread, with PTRACE_SYSCALL and no signal: nothing of the
// program's state was touched. Any other stop that comes first (a trap at a
// site, a signal, a system call stop, an exit) satisfies the interrupt (ptrace
// ends a pending interrupt with any stop, kernel/signal.c ptrace_stop) and is
// queued for the main loop like any event that arrives while the monitor is
// busy (deferEvent); that thread gives no sample this round.
//
// Threads asleep in a system call are left alone: an interrupt would end
// some calls with EINTR (epoll_wait, as a debugger's attach does), and their
// time is not CPU time. A thread in state R may be in the kernel; its
// sample's PC is then where it returns to user space.

// errTick is the main loop's wait ended by a tick.
var errTick = errors.New("sampling round due")

// An isampler is the state of interrupt sampling in one run.
type isampler struct {
	o      *InterruptSampling
	due    atomic.Bool // a round is due
	stop   chan struct{}
	done   chan struct{}
	asked  map[int]bool     // threads interrupted in this round, their stop not seen yet
	stat   map[int]*os.File // /proc/TGID/task/TID/stat, kept open per thread
	buf    []Sample
	statB  [512]byte
	rounds int
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
	s := &isampler{o: is, stop: make(chan struct{}), done: make(chan struct{}),
		asked: map[int]bool{}, stat: map[int]*os.File{}}
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
	for tid, f := range s.stat {
		f.Close()
		delete(s.stat, tid)
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

// sampleRound takes one sample of every thread on a CPU.
//
// Preconditions: on the tracer thread, in the main loop, between events;
// no thread is held.
func (m *mon) sampleRound() {
	s := m.isamp
	s.rounds++
	for _, t := range m.threads {
		if !t.runsCode() || t.fresh || t.mm.dead || !s.onCPU(t) {
			continue
		}
		// A thread that is gone answers ESRCH; its exit report comes.
		if err := interrupt(t.tid); err != nil {
			if !gone(err) {
				m.lose(fmt.Errorf("interrupt thread %d to sample it: %w", t.tid, err))
			}
			continue
		}
		s.asked[t.tid] = true
	}
	now := monotonic()
	for len(s.asked) > 0 {
		ev, err := m.wait()
		if err != nil {
			m.lose(fmt.Errorf("wait for the sampled threads: %w", err))
			clear(s.asked)
			break
		}
		if s.asked[ev.tid] {
			delete(s.asked, ev.tid)
			if m.sampleStop(ev, now) {
				continue
			}
		}
		m.deferEvent(ev)
	}
	if len(s.buf) > 0 && s.o.Deliver != nil {
		s.o.Deliver(s.buf)
	}
	s.buf = s.buf[:0]
	if s.rounds%64 == 0 {
		s.prune(m)
	}
}

// sampleStop takes the sample of thread ev.tid and resumes it, when ev is
// the stop of its interrupt; it reports false for any other stop.
//
// Preconditions: on the tracer thread; the thread was running and was
// interrupted in this round.
func (m *mon) sampleStop(ev event, now uint64) bool {
	t := m.threads[ev.tid]
	st := decodeStatus(ev.ws)
	if t == nil || st.kind != stopEvent || st.sig != unix.SIGTRAP || t.state != running {
		return false
	}
	// What dispatch does for an interrupt stop of a running thread
	// (eventStop has nothing to do for it).
	t.state = stopped
	t.inSyscall = false
	t.atEntry = false
	pc, err := peekUser(t.tid, offRip)
	if err == nil {
		m.isamp.buf = append(m.isamp.buf, Sample{PID: t.tgid, TID: t.tid, PC: pc, Time: now})
	} else if !gone(err) {
		m.lose(fmt.Errorf("read the PC of thread %d to sample it: %w", t.tid, err))
	}
	m.resume(t, 0)
	return true
}

// onCPU reports whether the kernel has t running or runnable (state R in
// /proc/TGID/task/TID/stat, proc(5)), reading the file it keeps open.
func (s *isampler) onCPU(t *thread) bool {
	f := s.stat[t.tid]
	if f == nil {
		var err error
		f, err = os.Open("/proc/" + strconv.Itoa(t.tgid) + "/task/" + strconv.Itoa(t.tid) + "/stat")
		if err != nil {
			return false
		}
		s.stat[t.tid] = f
	}
	n, err := f.ReadAt(s.statB[:], 0)
	if n == 0 && err != nil {
		// Gone (ESRCH); a thread given its number later opens it anew.
		f.Close()
		delete(s.stat, t.tid)
		return false
	}
	return statRunning(s.statB[:n])
}

// statRunning reads the state field of a /proc/PID/stat line: the first
// after the command name, which is in parentheses and may hold any byte.
func statRunning(b []byte) bool {
	k := bytes.LastIndexByte(b, ')')
	return k >= 0 && k+2 < len(b) && b[k+2] == 'R'
}

// prune closes the stat files of threads that are gone.
func (s *isampler) prune(m *mon) {
	for tid, f := range s.stat {
		if m.threads[tid] == nil {
			f.Close()
			delete(s.stat, tid)
		}
	}
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
