//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/patchprof/patchprof/breakpoint"
	"golang.org/x/sys/unix"
)

type event struct {
	tid int
	ws  unix.WaitStatus
}

type mon struct {
	o        Options
	xolOn    bool // the out-of-line engine serves the sites it can relocate
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
	regs     unix.PtraceRegs
	si       siginfo
	res      Result
	rootEnd  bool
	stopping atomic.Bool // profiling is to end: restore every byte and detach
	snap     atomic.Bool // a snapshot of the counts is asked for
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

// debug records every event (PATCHPROF_DEBUG=1), for developers: the last
// 400 lines are printed to stderr on SIGUSR2 and at the end.
var debug = os.Getenv("PATCHPROF_DEBUG") != ""

var (
	ring    [400]string
	ringPos int
	ringMu  sync.Mutex
)

func dbg(format string, args ...any) {
	ringMu.Lock()
	ring[ringPos%len(ring)] = fmt.Sprintf(format, args...)
	ringPos++
	ringMu.Unlock()
}

func dumpRing(m *mon) {
	ringMu.Lock()
	defer ringMu.Unlock()
	for k := max(0, ringPos-len(ring)); k < ringPos; k++ {
		fmt.Fprint(os.Stderr, "[pp] "+ring[k%len(ring)])
	}
	for _, t := range m.threads {
		fmt.Fprintf(os.Stderr, "[pp] thread %d state=%d fresh=%v held=%d vfork=%v group=%v\n", t.tid, t.state, t.fresh, t.held, t.vforkWait, t.groupStop)
	}
	fmt.Fprintf(os.Stderr, "[pp] queue=%v orphans=%v\n", m.queue, m.orphans)
}

// Preconditions: on the locked tracer thread.
func run(o Options) (*Result, error) {
	m := &mon{
		o: o, xolOn: o.Engine != EngineClassic,
		threads: map[int]*thread{}, orphans: map[int]event{}, faults: map[int]*Fault{},
		images: map[string]*Image{}, gcur: map[gkey]*breakpoint.Cursor{},
	}
	var (
		pid     int
		tids    []int
		pending []event
		err     error
	)
	if o.Attach != 0 {
		pid, tids, pending, err = attachAll(o.Attach)
	} else {
		pid, err = launch(&o)
		tids = []int{pid}
	}
	if err != nil {
		return nil, err
	}
	if o.Pin && o.Attach == 0 {
		// The tracer thread is discarded after the run: its mask goes with it.
		if _, err := pinTogether(pid); err != nil && debug {
			dbg("pin: %v\n", err)
		}
	}
	m.root = pid
	abandon := func(err error) (*Result, error) {
		if o.Attach != 0 {
			for _, tid := range tids {
				detach(tid, 0)
			}
		} else {
			unix.Kill(pid, unix.SIGKILL)
		}
		return nil, err
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return abandon(fmt.Errorf("find the executable of %d: %w", pid, err))
	}
	tab := o.Table
	if tab == nil {
		tab = breakpoint.NewTable(nil, 0)
	}
	m.rootImg = m.addImage(&Image{Path: exe, Table: tab})
	mem, err := openMem(pid)
	if err != nil {
		return abandon(err)
	}
	sp := &space{mem: mem, tgid: pid, threads: map[int]*thread{}}
	for _, tid := range tids {
		m.addThread(&thread{tid: tid, tgid: pid, sp: sp, state: stopped, swallowCont: o.Attach == 0})
	}
	m.res.Processes = 1
	if err := m.scanMaps(sp); err != nil {
		return abandon(fmt.Errorf("plant breakpoints: %w", err))
	}
	for _, mp := range sp.maps {
		if mp.Image == m.rootImg {
			m.res.Bias = mp.Bias
		}
	}
	if o.OnStart != nil {
		o.OnStart(pid)
	}
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
	if o.SnapshotReq != nil {
		go func() {
			for range o.SnapshotReq {
				m.snap.Store(true)
				wake()
			}
		}()
	}
	if o.Stop != nil {
		go func() {
			<-o.Stop
			m.stopping.Store(true)
			wake()
		}()
	}
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
	for {
		if m.stopping.Load() && !m.rootEnd {
			m.detachAll()
			m.res.Exit.Detached = true
			return &m.res, nil
		}
		if m.snap.Swap(false) && o.Snapshot != nil {
			// On the tracer thread, between events: the counts are at rest.
			o.Snapshot(m.res.Bias)
		}
		ev, err := m.next()
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
	return &m.res, nil
}

// next returns the oldest queued event, or waits for a new one.
func (m *mon) next() (event, error) {
	if len(m.queue) > 0 {
		ev := m.queue[0]
		m.queue = m.queue[1:]
		if t := m.threads[ev.tid]; t != nil && t.held > 0 {
			t.held--
		}
		return ev, nil
	}
	return m.wait()
}

func (m *mon) wait() (event, error) {
	var ws unix.WaitStatus
	for {
		tid, err := unix.Wait4(-1, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		return event{tid: tid, ws: ws}, err
	}
}

// waitFor waits for the next event of t, deferring the others.
func (m *mon) waitFor(t *thread) (event, error) {
	for {
		ev, err := m.wait()
		if err != nil {
			return ev, err
		}
		if ev.tid == t.tid {
			return ev, nil
		}
		m.deferEvent(ev)
	}
}

// deferEvent records an event that arrived while the monitor was busy with
// another thread. Deaths are accounted at once; a stop we caused ourselves in the
// held space is absorbed; anything else is queued for the main loop.
func (m *mon) deferEvent(ev event) {
	if debug {
		dbg("defer tid=%d status=%#x\n", ev.tid, uint32(ev.ws))
	}
	if ev.ws.Exited() || ev.ws.Signaled() {
		m.reap(ev)
		return
	}
	u := m.threads[ev.tid]
	if u == nil {
		m.queue = append(m.queue, ev)
		return
	}
	was := u.state
	u.state = stopped
	u.inSyscall = syscallEvent(trapCause(ev.ws))
	if u.sp == m.cur && ev.ws.Stopped() && trapCause(ev.ws) == unix.PTRACE_EVENT_STOP {
		// Absorbed: the thread stays stopped until resumeOthers.
		m.eventStop(u, was, ev.ws.StopSignal())
		return
	}
	u.held++
	m.queue = append(m.queue, ev)
}

// reap accounts for a task that has ended.
func (m *mon) reap(ev event) {
	if t := m.threads[ev.tid]; t != nil {
		m.removeThread(t)
	}
	if ev.tid != m.root {
		return
	}
	m.rootEnd = true
	if ev.ws.Signaled() {
		m.res.Exit.Signal = int(ev.ws.Signal())
		if f := m.faults[m.root]; f != nil && f.Signal == m.res.Exit.Signal {
			m.res.Exit.Fault = f
		}
	} else {
		m.res.Exit.Code = ev.ws.ExitStatus()
	}
}

// resume restarts a stopped thread, delivering sig. A thread in group-stop is
// left stopped with PTRACE_LISTEN, as it would be without patchprof.
func (m *mon) resume(t *thread, sig int) {
	if debug {
		dbg("resume tid=%d sig=%d group=%v\n", t.tid, sig, t.groupStop)
	}
	if t.groupStop && sig == 0 {
		if listen(t.tid) == nil {
			t.state = listening
		}
		return
	}
	// ESRCH means the thread was killed meanwhile; its death will be reported.
	if cont(t.tid, sig) == nil {
		t.state = running
	}
}

// accept does what every event needs first: a death is accounted, the first
// report of a task whose creation is not known yet is kept, and a stop marks
// its thread stopped. It returns the stopped thread and its state before.
func (m *mon) accept(ev event) (t *thread, was tstate, ok bool) {
	if ev.ws.Exited() || ev.ws.Signaled() {
		m.reap(ev)
		return nil, 0, false
	}
	t = m.threads[ev.tid]
	if t == nil {
		// A new task can report its first stop before its parent reports
		// creating it; keep the report until then.
		m.orphans[ev.tid] = ev
		return nil, 0, false
	}
	if !ev.ws.Stopped() {
		return nil, 0, false
	}
	was = t.state
	t.state = stopped
	t.inSyscall = syscallEvent(trapCause(ev.ws))
	return t, was, true
}

func (m *mon) handle(ev event) {
	if debug {
		dbg("handle tid=%d status=%#x\n", ev.tid, uint32(ev.ws))
	}
	t, was, ok := m.accept(ev)
	if !ok {
		return
	}
	sig := ev.ws.StopSignal()
	switch cause := trapCause(ev.ws); cause {
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
		m.newTask(t, cause, nil, -1)
		m.resume(t, 0)
	case unix.PTRACE_EVENT_VFORK_DONE:
		t.vforkWait = false
		m.resume(t, 0)
	case unix.PTRACE_EVENT_EXEC:
		if m.exec(t) {
			m.resume(t, 0)
		}
	case unix.PTRACE_EVENT_STOP:
		if t.fresh && t.release {
			m.release(t)
			return
		}
		m.eventStop(t, was, sig)
		m.resume(t, 0)
	case 0:
		if sig == unix.SIGTRAP {
			m.trap(t)
			return
		}
		m.signal(t, sig)
	default:
		m.resume(t, 0)
	}
}

// trap handles a SIGTRAP stop outside a step: our int3, or the program's own.
func (m *mon) trap(t *thread) {
	rip, err := peekUser(t.tid, offRip)
	if err != nil {
		return // killed meanwhile
	}
	pc := rip - 1
	mp, i, ok := t.sp.lookup(pc)
	ours := ok && mp.tab.Armed(i) && !t.sp.dead && !(t.sp.dis == mp && t.sp.disarmed == i)
	// The out-of-line hit, the common case, reads and writes only the words
	// it needs (BenchmarkRegisterAccess: one system call less than the
	// whole register set). A thread whose PC is just past our int3, inside
	// an instruction longer than one byte, can only have got there by
	// executing the int3: the siginfo need not be read either.
	if ours && m.xolOn && mp.xol != nil && mp.xol.state[i] == slotReadyLong {
		rsp, err := peekUser(t.tid, offRsp)
		if err != nil {
			return
		}
		var g uint64
		if mp.tab.IsGo(i) {
			if g, err = peekUser(t.tid, offR14); err != nil {
				return
			}
		}
		cur := m.cursorOf(t, mp, i, g)
		t.xolUndo = mp.tab.Hit(cur, i, rsp)
		t.xolMap, t.xolSite, t.xolCur = mp, i, cur
		if pokeUser(t.tid, offRip, mp.xol.slot(i)) != nil {
			return
		}
		m.resume(t, 0)
		return
	}
	if err := unix.PtraceGetRegs(t.tid, &m.regs); err != nil {
		return
	}
	if getSiginfo(t.tid, &m.si) != nil {
		return
	}
	if m.si.Code == siKernel && ours {
		if m.xolOn && m.hitXOL(t, mp, i) {
			return
		}
		m.hit(t, mp, i, pc)
		return
	}
	m.signal(t, unix.SIGTRAP)
}
