//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/patchprof/patchprof/breakpoint"
	"golang.org/x/sys/unix"
)

// An event is one wait status of one task, as wait4 returned it.
type event struct {
	tid int
	ws  unix.WaitStatus
}

// A mon is the state of one run of the monitor; it lives on the tracer thread.
type mon struct {
	o      Options
	xolOn  bool // the out-of-line engine serves the sites it can relocate
	jumpOn bool // sites planned for it take a jump patch (EngineJump)
	// ahead are the executable's trampolines built before an attach
	// (prebuild_linux_amd64.go), until jumpAll takes them.
	ahead    *aheadJumps
	live     liveCounts
	rootImg  *Image
	images   map[string]*Image // by path; nil: asked, not profiled
	imgs     []*Image          // by id
	gcur     map[gkey]*breakpoint.Cursor
	root     int
	threads  map[int]*thread
	queue    []event
	orphans  map[int]event // first reports of tasks whose creation event has not arrived
	cur      *space        // the space held in all-stop, nil if none
	faults   map[int]*Fault
	res      Result
	problems []error // what made the counts incomplete (Result.Degraded)
	rootEnd  bool
	stopping atomic.Bool // profiling is to end: restore every byte and detach
	snap     atomic.Bool // a snapshot of the counts is asked for
	term     *termWatch  // the target's use of patchprof's terminal, once seen
	isamp    *isampler   // interrupt sampling (Options.Interrupt), when on
	spin     int         // polls before a blocking wait (wait)
	// filtered: the target runs under the monitor's seccomp filter, and
	// its threads stop only at the system calls it traces
	// (sysfilter_linux_amd64.go).
	filtered bool
	ttyFds   []uint32 // the descriptors on the terminal the filter traces calls on
}

// Run starts the target traced, plants the table's sites, counts traps until
// every traced task has ended, and returns how the target ended. The counts are
// left in o.Table.
func Run(o Options) (*Result, error) {
	type out struct {
		r   *Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		// All ptrace requests must come from one OS thread: the tracer.
		runtime.LockOSThread()
		r, err := run(o)
		ch <- out{r, err}
		// The thread stays locked and is discarded with the goroutine: it was the
		// tracer, and nothing else should inherit that.
	}()
	x := <-ch
	return x.r, x.err
}

// newMon returns the state of a run with options o, before any target.
func newMon(o Options) *mon {
	return &mon{
		o: o, xolOn: o.Engine != EngineClassic, jumpOn: o.Engine == EngineJump,
		threads: map[int]*thread{}, orphans: map[int]event{}, faults: map[int]*Fault{},
		images: map[string]*Image{}, gcur: map[gkey]*breakpoint.Cursor{},
	}
}

// Preconditions: on the locked tracer thread.
func run(o Options) (*Result, error) {
	m := newMon(o)
	var (
		pid     int
		tids    []int
		pending []event
		err     error
	)
	var stopped time.Time
	if o.Attach != 0 {
		m.prePlan(o.Attach)
		stopped = time.Now()
		pid, tids, pending, err = attachAll(o.Attach)
	} else {
		pid, err = launch(&o)
		tids = []int{pid}
	}
	if err != nil {
		return nil, err
	}
	pinned := false
	if o.Pin && o.Attach == 0 {
		// The tracer thread is discarded after the run: its mask goes with it.
		_, err := pinTogether(pid)
		pinned = err == nil
		if err != nil && debug {
			dbg("pin: %v\n", err)
		}
	}
	if !pinned && runtime.NumCPU() > 1 {
		m.spin = spinPolls
	}
	m.root = pid
	if err := m.plantRoot(pid, tids, pending); err != nil {
		// Let the target go: an attached one keeps running as it was (nothing
		// was planted, or the planting failed), a started one is killed.
		if o.Attach != 0 {
			for _, tid := range tids {
				if e := detach(tid, 0); e != nil && !gone(e) {
					err = errors.Join(err, fmt.Errorf("detach thread %d: %w", tid, e))
				}
			}
		} else if e := unix.Kill(pid, unix.SIGKILL); e != nil && !gone(e) {
			err = errors.Join(err, fmt.Errorf("kill %d: %w", pid, e))
		}
		return nil, err
	}
	if o.OnStart != nil {
		o.OnStart(pid)
	}
	m.startSampling()
	defer m.stopSampling()
	if debug {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGUSR2)
		go func() {
			for range c {
				dumpRing(m)
			}
		}()
		defer dumpRing(m)
	}
	m.listen()
	// Threads that reported something else than our interrupt while we
	// attached keep it queued; the others run.
	for _, ev := range pending {
		if t := m.threads[ev.tid]; t != nil {
			t.held++
		}
		m.queue = append(m.queue, ev)
	}
	for _, t := range m.threads {
		if t.held == 0 {
			m.resume(t, 0)
		}
	}
	if o.Attach != 0 {
		m.res.AttachPause = time.Since(stopped)
	}
	if m.o.Hits != nil && m.jumpOn {
		done, fin := make(chan struct{}), make(chan struct{})
		go func() {
			m.reportLive(done)
			close(fin)
		}()
		defer func() {
			close(done)
			<-fin
		}()
	}
	return m.loop()
}

// plantRoot registers the stopped target's threads and its address space,
// and plants its executable and the libraries already mapped. first are the
// stops other than our interrupt that the threads reported while patchprof
// attached (attachAll): they say which threads are inside a system call.
//
// Preconditions: on the locked tracer thread; every thread in tids is stopped.
func (m *mon) plantRoot(pid int, tids []int, first []event) error {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return fmt.Errorf("find the executable of %d: %w", pid, err)
	}
	if m.o.Attach != 0 && m.o.Path != "" && strings.TrimSuffix(exe, " (deleted)") != strings.TrimSuffix(m.o.Path, " (deleted)") {
		// It exec'd between the read of its executable and the attach:
		// the table is another program's.
		return &ExecedError{PID: pid, Planned: m.o.Path, Now: exe}
	}
	tab := m.o.Table
	if tab == nil {
		tab = breakpoint.NewTable(nil, 0)
	}
	m.rootImg = m.addImage(&Image{Path: exe, Table: tab, MaySetGS: m.o.MaySetGS, Go: m.o.Go})
	mem, err := openMem(pid)
	if err != nil {
		return err
	}
	mm := &space{mem: mem, tgid: pid, threads: map[int]*thread{}}
	for _, tid := range tids {
		m.addThread(&thread{tid: tid, tgid: pid, mm: mm, state: stopped, swallowCont: m.o.Attach == 0})
	}
	m.res.Processes = 1
	stops := m.noteFirstStops(first)
	if err := m.readSignals(pid, stops); err != nil {
		return err
	}
	if err := m.scanMaps(mm); err != nil {
		return fmt.Errorf("plant breakpoints: %w", err)
	}
	if m.jumpOn && m.o.Attach != 0 && m.mayQuiet(mm) {
		// Every site at once, and no system-call stops when no int3 is
		// left: eager_linux_amd64.go.
		if via, err := m.injector(pid, stops); err == nil {
			mm.eager = true
			m.jumpAll(via)
			mm.quiet = mm.noTraps()
			if mm.quiet {
				m.note(quietNote)
			}
		}
	}
	m.ahead = nil // built for an eager attach: not kept past it
	for _, mp := range mm.maps {
		if mp.Image == m.rootImg {
			m.res.Bias = mp.Bias
		}
	}
	return nil
}

// listen starts the goroutines that turn Options.SnapshotReq and
// Options.Stop into flags the loop reads between events, waking it.
func (m *mon) listen() {
	if m.o.SnapshotReq != nil {
		go func() {
			for range m.o.SnapshotReq {
				m.snap.Store(true)
				wake()
			}
		}()
	}
	if m.o.Stop != nil {
		go func() {
			<-m.o.Stop
			m.stopping.Store(true)
			wake()
		}()
	}
}

// loop handles events until every traced task has ended, or profiling is
// to stop (attach mode).
//
// Preconditions: on the locked tracer thread.
func (m *mon) loop() (*Result, error) {
	for {
		if m.stopping.Load() && !m.rootEnd {
			m.detachAll()
			m.res.Exit.Detached = true
			return m.result(), nil
		}
		if m.snap.Swap(false) && m.o.Snapshot != nil {
			// On the tracer thread, between events: the counts are at rest.
			m.o.Snapshot(m.res.Bias, m.counts())
		}
		if m.isamp != nil && m.isamp.due.Swap(false) {
			m.sampleRound()
		}
		ev, err := m.next()
		if err == errTick {
			continue
		}
		if errors.Is(err, unix.ECHILD) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("wait for target: %w", err)
		}
		m.handle(ev)
	}
	if !m.rootEnd {
		return nil, errors.New("lost track of the target")
	}
	return m.result(), nil
}

// result returns the run's result, with its counts and the problems met
// on the way.
func (m *mon) result() *Result {
	m.res.Counts = m.counts()
	m.res.Degraded = errors.Join(m.problems...)
	return &m.res
}

// counts folds what the target counted in-process and returns a copy of
// every table's counts.
//
// Preconditions: on the tracer thread, between events.
func (m *mon) counts() Counts {
	m.foldAll()
	c := Counts{}
	if m.o.Table != nil {
		c[m.o.Table] = m.o.Table.Counts()
	}
	for _, img := range m.imgs {
		if _, ok := c[img.Table]; !ok {
			c[img.Table] = img.Table.Counts()
		}
	}
	return c
}

// lose records a failure that leaves the counts incomplete without ending
// the run (Result.Degraded). A thread that is gone is not one: see gone.
func (m *mon) lose(err error) {
	if err == nil || gone(err) {
		return
	}
	if debug {
		dbg("lost: %v\n", err)
	}
	m.problems = append(m.problems, err)
}

// spinPolls is how many times wait polls before it blocks: each poll is a
// system call of about a microsecond.
const spinPolls = 40

// leaveChanged records a failure that leaves a change of ours in the
// target (Result.Changed), besides the counts (lose).
func (m *mon) leaveChanged(err error) {
	if err == nil || gone(err) {
		return
	}
	m.res.Changed = true
	m.lose(err)
}

// reap accounts for task tid, which has ended as st says.
func (m *mon) reap(tid int, st stop) {
	if t := m.threads[tid]; t != nil {
		m.abandonHandlers(t)
		m.removeThread(t)
	}
	if tid != m.root {
		return
	}
	m.rootEnd = true
	if st.sig != 0 {
		m.res.Exit.Signal = int(st.sig)
		if f := m.faults[m.root]; f != nil && f.Signal == m.res.Exit.Signal {
			m.res.Exit.Fault = f
		}
	} else {
		m.res.Exit.Code = st.code
	}
}

// resume restarts a stopped thread, delivering sig. A thread in group-stop is
// left stopped with PTRACE_LISTEN, as it would be without patchprof.
func (m *mon) resume(t *thread, sig int) {
	if debug {
		dbg("resume tid=%d sig=%d group=%v\n", t.tid, sig, t.groupStop)
	}
	if t.groupStop && sig == 0 {
		if err := listen(t.tid); err != nil {
			m.lose(fmt.Errorf("listen thread %d: %w", t.tid, err))
			return
		}
		t.state = listening
		return
	}
	m.repair(t)
	if t.mm.ctr != nil && !t.mm.dead {
		m.counting(t)
	}
	if m.isamp != nil {
		m.resumed(t) // before the thread can run again
	}
	if t.idleExit {
		// Its call runs as one the filter lets through: the next stop
		// reads whatever state it left (handleStop), and the action it
		// sets is the one read at its entry (exitIdle).
		t.idleExit = false
		t.sysEntry, t.inSyscall, t.atEntry = false, false, false
		if t.pendSig != 0 && t.sigs != nil {
			t.sigs.act[t.pendSig-1] = t.pendAct
		}
		t.pendSig = 0
		if t.pendMaskSet {
			t.mask, t.pendMaskSet = t.pendMask, false
		}
	}
	// Without system-call stops: into the dynamic linker's mapping
	// window, to its next stop; or where the filter stops the thread at
	// the calls that matter.
	t.untraced = t.loading && sig == 0 || !m.resumeSyscalls(t)
	t.loading = false
	resume := contSyscall
	if t.untraced {
		resume = cont
	}
	if err := resume(t.tid, sig); err != nil {
		m.lose(fmt.Errorf("continue thread %d: %w", t.tid, err))
		return
	}
	t.state = running
}

// An outcome is what dispatch leaves to the wait site that got the stop.
type outcome uint8

const (
	// outResume: the stop is dealt with; the thread is stopped, and the
	// site restarts it as it restarts any thread.
	outResume outcome = iota
	// outGone: nothing is left to do: the task ended, or was let go, or
	// is not known yet (its report is kept until its creation is).
	outGone
	// outExec: the thread exec'd. It has a new address space, or was let
	// go (--no-follow): traced tells which.
	outExec
	// outJobStop: the thread entered a job-control stop.
	outJobStop
	// outSignal: a signal-delivery-stop, SIGTRAP included, for the site
	// to interpret: a trap at a site, a step completed, a signal to deliver.
	outSignal
)

// dispatch is the one place that acts on a wait status: a death is
// accounted, the first report of a task whose creation is not known yet is
// kept, and a stop marks its thread stopped; then the events that change the
// set of tasks are followed (new threads and processes, the end of a vfork,
// exec) and job control is tracked. Signal-delivery-stops are left to the
// caller: the main loop, a single-step, the end of a rep instruction and the
// detach each read them their own way. It returns the thread (nil when
// there is none to act on), the decoded stop, and what is left to do.
//
// Preconditions: on the tracer thread.
func (m *mon) dispatch(ev event) (*thread, stop, outcome) {
	st := decodeStatus(ev.ws)
	if st.kind == stopGone {
		m.reap(ev.tid, st)
		return nil, st, outGone
	}
	t := m.threads[ev.tid]
	if t == nil && st.kind == stopExit {
		// One the monitor gave up (a child it killed): let it die. A
		// new task's first report is its PTRACE_EVENT_STOP, never this.
		if err := cont(ev.tid, 0); err != nil && !gone(err) {
			m.lose(fmt.Errorf("let task %d end: %w", ev.tid, err))
		}
		return nil, st, outGone
	}
	if t == nil {
		// A new task can report its first stop before its parent reports
		// creating it; keep the report until then.
		m.orphans[ev.tid] = ev
		return nil, st, outGone
	}
	if st.kind == stopOther && !ev.ws.Stopped() {
		return nil, st, outGone
	}
	was := t.state
	t.state = stopped
	t.inSyscall = st.inSyscall()
	t.atEntry = false
	t.inCreate = st.kind == stopNewTask
	switch st.kind {
	case stopNewTask:
		m.newTask(t, st.event)
	case stopVforkDone:
		t.vforkWait = false
	case stopExec:
		m.exec(t)
		return t, st, outExec
	case stopEvent:
		if t.fresh && t.release {
			m.release(t)
			return t, st, outGone
		}
		if m.eventStop(t, was, st.sig) {
			return t, st, outJobStop
		}
	case stopSignal:
		return t, st, outSignal
	case stopSyscall:
		m.res.SyscallStops++
		m.syscallStop(t)
	case stopSeccomp:
		m.res.SyscallStops++
		m.seccompStop(t)
	case stopExit:
		m.threadExit(t)
	}
	return t, st, outResume
}

// traced reports whether t is still one of the monitor's threads.
func (m *mon) traced(t *thread) bool { return m.threads[t.tid] == t }

// handle acts on one event in the main loop.
//
// Preconditions: on the tracer thread; no thread is held.
func (m *mon) handle(ev event) {
	if debug {
		dbg("handle tid=%d status=%#x\n", ev.tid, uint32(ev.ws))
	}
	if m.isamp != nil && m.sampled(ev) {
		return
	}
	t, st, out := m.dispatch(ev)
	switch out {
	case outResume, outJobStop:
		m.resume(t, 0)
	case outExec:
		if m.traced(t) {
			m.resume(t, 0)
		}
	case outSignal:
		if st.sig == unix.SIGTRAP {
			m.trap(t)
			return
		}
		if st.sig == unix.SIGSTOP && t.mm.gated && m.gateStop(t) {
			return
		}
		m.signal(t, &sigStop{sig: st.sig})
	}
}

// trap handles a SIGTRAP stop outside a step: our int3, or the program's own.
//
// Preconditions: on the tracer thread; t is in a signal-delivery-stop for
// SIGTRAP.
func (m *mon) trap(t *thread) {
	rip, err := peekUser(t.tid, offRip)
	if err != nil {
		m.lose(fmt.Errorf("read the PC of thread %d: %w", t.tid, err))
		return
	}
	pc := rip - 1
	mp, i, ok := t.mm.lookup(pc)
	ours := ok && mp.tab.Armed(i) && !t.mm.dead && !(t.mm.dis == mp && t.mm.disarmed == i)
	if ours {
		t.trapped = true
		m.res.Traps++
		if m.o.Hits != nil {
			m.o.Hits.Add(1)
		}
	}
	if ours && mp.tab.IsResume(i) {
		m.hitResume(t, mp, i)
		return
	}
	// The out-of-line hit, the common case, reads and writes only the words
	// it needs (BenchmarkRegisterAccess: one system call less than the
	// whole register set). A thread whose PC is just past our int3, inside
	// an instruction longer than one byte, can only have got there by
	// executing the int3: the siginfo need not be read either.
	if ours && m.xolOn && mp.xol != nil && mp.xol.state[i] == slotReadyLong && !t.trapRisk() {
		m.hitXOLFast(t, mp, i)
		return
	}
	st := &sigStop{sig: unix.SIGTRAP}
	if err := st.load(t.tid); err != nil {
		m.lose(fmt.Errorf("read the registers of thread %d: %w", t.tid, err))
		return
	}
	if ours && st.info.Code <= 0 && t.mask&trapBit != 0 {
		// A SIGTRAP the program sent itself and keeps blocked was pending
		// when our int3 fired: the kernel unblocked it, and reports our
		// trap with its siginfo (a pending standard signal is not queued
		// twice). Count the hit; the program's SIGTRAP goes back pending.
		m.requeue(t, &st.info)
		st.info.Code = siKernel
	}
	if st.info.Code == siKernel && ours {
		if m.xolOn && m.hitXOL(t, mp, i, &st.regs) {
			return
		}
		m.hit(t, mp, i, pc, st)
		return
	}
	// An int3 no site's may be a patch's filler (filler_linux_amd64.go),
	// or an entry check's whose call slots are all taken.
	if st.info.Code == siKernel && !ours && (m.intoCovered(t, pc) || m.callOverflow(t, pc, st)) {
		return
	}
	m.signal(t, st)
}
