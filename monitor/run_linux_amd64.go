//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/patchprof/patchprof/breakpoint"
	"golang.org/x/sys/unix"
)

// traceOptions follow every child and thread, report exec, and make the kernel
// kill the target if patchprof dies (ptrace(2), PTRACE_O_EXITKILL).
const traceOptions = unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEFORK |
	unix.PTRACE_O_TRACEVFORK | unix.PTRACE_O_TRACEVFORKDONE |
	unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_EXITKILL

// si_code values (asm-generic/siginfo.h).
const (
	siKernel  = 0x80 // sent by the kernel: int3 reports SIGTRAP with SI_KERNEL
	trapTrace = 2    // TRAP_TRACE: a single-step completed
)

type tstate uint8

const (
	running   tstate = iota // resumed by us; may report a stop at any time
	stopped                 // in a ptrace-stop we have not ended
	listening               // in group-stop, restarted with PTRACE_LISTEN: runs no code
)

type thread struct {
	tid, tgid   int
	sp          *space
	state       tstate
	fresh       bool // created; its initial ptrace-stop not yet seen
	held        int  // events of this thread waiting in the queue
	vforkWait   bool // blocked in vfork until the child execs or exits
	groupStop   bool // in a job-control stop
	swallowCont bool // the SIGCONT patchprof sent at launch is still to come
	release     bool // a forked child to let go at its first stop (--no-follow)
	// inSyscall is set while the thread is in an event stop inside a system
	// call (clone, fork, vfork, exec): resumed, the kernel finishes that
	// call and writes its result into rax, so no system call may be injected
	// through it.
	inSyscall bool
	// The thread's last out-of-line hit, to undo when a signal takes it out
	// of the slot before the displaced instruction ran.
	xolMap  *mapping
	xolSite int
	xolUndo breakpoint.Undo
	xolCur  *breakpoint.Cursor
	cursors []breakpoint.Cursor // line-entry position per image (Image.id)
}

// cursor returns t's line-entry cursor for img.
func (t *thread) cursor(img *Image) *breakpoint.Cursor {
	for len(t.cursors) <= img.id {
		t.cursors = append(t.cursors, breakpoint.Cursor{})
	}
	return &t.cursors[img.id]
}

// A gkey names one goroutine of one process in one image: the g pointer Go's
// register ABI keeps in R14.
type gkey struct {
	img  int
	tgid int
	g    uint64
}

// cursorOf returns the line-entry cursor for a hit of thread t at site i of
// mp: per goroutine in Go code, where an activation must follow its goroutine
// from one OS thread to another; per thread elsewhere. g is the thread's R14.
func (m *mon) cursorOf(t *thread, mp *mapping, i int, g uint64) *breakpoint.Cursor {
	if !mp.tab.IsGo(i) {
		return t.cursor(mp.Image)
	}
	k := gkey{mp.Image.id, t.tgid, g}
	c := m.gcur[k]
	if c == nil {
		// A goroutine's first hit; g structs are reused for new goroutines,
		// whose first entry trap (at a higher SP) closes what a dead one left.
		c = &breakpoint.Cursor{}
		m.gcur[k] = c
	}
	return c
}

// cloneCursors copies a thread's cursors for a child that continues from its
// parent's position.
func cloneCursors(cs []breakpoint.Cursor) []breakpoint.Cursor {
	out := make([]breakpoint.Cursor, len(cs))
	for k := range cs {
		out[k] = cs[k].Clone()
	}
	return out
}

// A space is one address space (mm): the threads of a process, plus any vfork
// child sharing it until it execs. At most one site is disarmed in it at a time.
type space struct {
	mem      *procMem
	tgid     int // a process using it, whose /proc/PID/maps describes it
	threads  map[int]*thread
	maps     []*mapping // profiled images mapped here
	dis      *mapping   // mapping of the disarmed site, nil if none
	disarmed int        // site whose original byte is in memory now
	dead     bool
}

// A mapping is an image planted in one address space.
type mapping struct {
	Mapped
	tab  *breakpoint.Table // Image.Table viewed at Bias
	seen bool              // found again by the current scan
	xol  *xolArea          // scratch region of the out-of-line engine, nil if none
	// xolFailed: no scratch region could be mapped; the classic cycle
	// serves the module in this process.
	xolFailed bool
}

// lookup returns the mapping and site at runtime address pc.
func (sp *space) lookup(pc uint64) (*mapping, int, bool) {
	for _, mp := range sp.maps {
		if pc >= mp.Lo && pc < mp.Hi {
			i, ok := mp.tab.Lookup(pc)
			return mp, i, ok
		}
	}
	return nil, 0, false
}

// snapshot returns what is mapped, for a fault report.
func (sp *space) snapshot() []Mapped {
	out := make([]Mapped, len(sp.maps))
	for k, mp := range sp.maps {
		out[k] = mp.Mapped
	}
	return out
}

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

// launch starts the target stopped at its exec and seized.
//
// Preconditions: on the locked tracer thread.
func launch(o *Options) (int, error) {
	files := []uintptr{fdOf(o.Stdin, os.Stdin), fdOf(o.Stdout, os.Stdout), fdOf(o.Stderr, os.Stderr)}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	attr := &syscall.ProcAttr{Dir: o.Dir, Env: env, Files: files, Sys: &syscall.SysProcAttr{Ptrace: true}}
	pid, err := syscall.ForkExec(o.Path, o.Args, attr)
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			return 0, notPermitted(err)
		}
		return 0, fmt.Errorf("start %s: %w", o.Path, err)
	}
	var ws unix.WaitStatus
	if err := waitPid(pid, &ws, unix.WALL); err != nil {
		return 0, fmt.Errorf("wait for %s to start: %w", o.Path, err)
	}
	if !ws.Stopped() {
		return 0, fmt.Errorf("%s ended before it started (status %#x)", o.Path, uint32(ws))
	}
	// Hand over from PTRACE_TRACEME to PTRACE_SEIZE: detach into a SIGSTOP
	// group-stop (delivered before the first user instruction), then seize the
	// stopped process. The target has not run a single instruction of its own.
	if err := detach(pid, int(unix.SIGSTOP)); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		return 0, fmt.Errorf("detach %d: %w", pid, err)
	}
	if err := waitPid(pid, &ws, unix.WALL|unix.WUNTRACED); err != nil || !ws.Stopped() {
		unix.Kill(pid, unix.SIGKILL)
		return 0, fmt.Errorf("%s did not stop at its start (status %#x): %v", o.Path, uint32(ws), err)
	}
	if err := seize(pid, traceOptions); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		if errors.Is(err, unix.EPERM) {
			return 0, notPermitted(err)
		}
		return 0, fmt.Errorf("seize %d: %w", pid, err)
	}
	if err := waitPid(pid, &ws, unix.WALL); err != nil || !ws.Stopped() {
		unix.Kill(pid, unix.SIGKILL)
		return 0, fmt.Errorf("%s did not report its stop (status %#x): %v", o.Path, uint32(ws), err)
	}
	// End the job-control stop we caused. Left in place, the kernel would
	// report every later PTRACE_INTERRUPT stop with SIGSTOP instead of SIGTRAP
	// (kernel/signal.c, do_jobctl_trap), indistinguishable from a real group
	// stop. The SIGCONT itself is swallowed when it is delivered.
	if err := unix.Kill(pid, unix.SIGCONT); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		return 0, fmt.Errorf("continue %d: %w", pid, err)
	}
	return pid, nil
}

func notPermitted(err error) error {
	if v, ok := statusField("/proc/self/status", "TracerPid"); ok && v != "0" {
		return fmt.Errorf("%w: patchprof is itself traced by process %s (strace -f, gdb?), so its child cannot be traced again: run patchprof outside that tracer: %w",
			ErrPtraceNotPermitted, v, err)
	}
	scope := ""
	if b, e := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); e == nil {
		scope = fmt.Sprintf(" (kernel.yama.ptrace_scope=%s)", strings.TrimSpace(string(b)))
	}
	return fmt.Errorf("%w%s: set kernel.yama.ptrace_scope to 0 or 1 (sysctl -w kernel.yama.ptrace_scope=1), or in a container allow ptrace (CAP_SYS_PTRACE, a seccomp profile that permits ptrace): %w",
		ErrPtraceNotPermitted, scope, err)
}

func fdOf(f, def *os.File) uintptr {
	if f == nil {
		f = def
	}
	return f.Fd()
}

func waitPid(pid int, ws *unix.WaitStatus, opts int) error {
	for {
		_, err := unix.Wait4(pid, ws, opts, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// loadBias compares the entry point the kernel used (AT_ENTRY in the auxiliary
// vector) with the ELF header's: the difference is where a PIE was loaded.
func loadBias(pid int, entry uint64) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/auxv")
	if err != nil {
		return 0, fmt.Errorf("read auxiliary vector: %w", err)
	}
	const atEntry = 9
	for i := 0; i+16 <= len(b); i += 16 {
		k := binary.LittleEndian.Uint64(b[i:])
		v := binary.LittleEndian.Uint64(b[i+8:])
		if k == atEntry {
			return v - entry, nil
		}
	}
	return 0, errors.New("no AT_ENTRY in the auxiliary vector")
}

func (m *mon) addThread(t *thread) {
	m.threads[t.tid] = t
	t.sp.threads[t.tid] = t
	m.res.Threads++
}

func (m *mon) removeThread(t *thread) {
	delete(m.threads, t.tid)
	delete(t.sp.threads, t.tid)
	if len(t.sp.threads) == 0 && !t.sp.dead {
		t.sp.dead = true
		t.sp.mem.Close()
	}
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

// syscallEvent reports whether a ptrace event stop happens inside a system
// call that the kernel completes after it.
func syscallEvent(cause int) bool {
	switch cause {
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK,
		unix.PTRACE_EVENT_VFORK_DONE, unix.PTRACE_EVENT_EXEC:
		return true
	}
	return false
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

// eventStop interprets a PTRACE_EVENT_STOP of t, which was in state was.
// It is the initial stop of a new task, the end of a PTRACE_LISTEN (SIGCONT
// arrived), a job-control stop (the stop signal), or one of our
// PTRACE_INTERRUPTs (SIGTRAP). An interrupt can be satisfied by any other stop
// the thread reports meanwhile, or arrive after it, so interrupt stops are not
// matched to requests: an extra one is simply resumed.
func (m *mon) eventStop(t *thread, was tstate, sig syscall.Signal) {
	switch {
	case t.fresh:
		t.fresh = false
	case was == listening:
		t.groupStop = false
	case isStopSignal(sig):
		t.groupStop = true
	}
}

// trapCause returns the PTRACE_EVENT_* of a ptrace-stop, or 0. (WaitStatus's
// own TrapCause answers -1 unless the stop signal is SIGTRAP, but a group-stop
// reports PTRACE_EVENT_STOP with the stop signal; ptrace(2), "Group-stop".)
func trapCause(ws unix.WaitStatus) int { return int(uint32(ws) >> 16) }

func isStopSignal(s syscall.Signal) bool {
	return s == unix.SIGSTOP || s == unix.SIGTSTP || s == unix.SIGTTIN || s == unix.SIGTTOU
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

// signal passes a signal through to the target, remembering where it was
// delivered in case it kills the process.
func (m *mon) signal(t *thread, sig syscall.Signal) {
	if sig == unix.SIGCONT && t.swallowCont {
		t.swallowCont = false
		m.resume(t, 0)
		return
	}
	m.noteFault(t, sig)
	if m.xolOn {
		m.outOfSlot(t, syncFault(sig, m.si.Code))
	}
	m.resume(t, int(sig))
}

func (m *mon) noteFault(t *thread, sig syscall.Signal) {
	switch sig {
	case unix.SIGCHLD, unix.SIGURG, unix.SIGWINCH, unix.SIGCONT:
		return // never fatal by default; Go's preemption sends SIGURG often
	}
	f := &Fault{Signal: int(sig)}
	if getSiginfo(t.tid, &m.si) == nil {
		f.Code = m.si.Code
		switch sig {
		case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE:
			f.Addr = m.si.Addr
		}
	}
	if unix.PtraceGetRegs(t.tid, &m.regs) == nil {
		f.PC, f.SP = m.regs.Rip, m.regs.Rsp
		f.Maps = t.sp.snapshot()
		for _, mp := range t.sp.maps {
			if mp.xol != nil && mp.xol.contains(f.PC) {
				// In a slot: report the site whose instruction it is.
				if i := int((f.PC - mp.xol.base) / slotStride); i < mp.tab.Len() {
					f.PC = mp.tab.RuntimeAddr(i)
				}
			}
		}
		if !t.sp.dead {
			buf := make([]byte, 16<<10)
			n, _ := t.sp.mem.ReadMemory(f.SP, buf)
			if n < 0 {
				n = 0
			}
			f.Stack = buf[:n]
		}
	}
	m.faults[t.tgid] = f
}

// hit is Bishop's cycle for one trap of thread t at site i (runtime address
// addr): count, put the original byte back, single-step, re-arm, continue.
//
// Preconditions: on the tracer thread; t is stopped just after the int3.
func (m *mon) hit(t *thread, mp *mapping, i int, addr uint64) {
	tab := mp.tab
	cur := m.cursorOf(t, mp, i, m.regs.R14)
	undo := tab.Hit(cur, i, m.regs.Rsp)
	if tab.OriginalByte(i) == breakpoint.Int3 {
		// The program's own int3 is at the site: it has just executed, as
		// it would have without us. Deliver its SIGTRAP (the stop's siginfo,
		// SI_KERNEL, is the one the kernel made for it).
		m.signal(t, unix.SIGTRAP)
		return
	}
	sp := t.sp
	if m.stopOthers(sp, t) {
		m.res.Holds++
	}
	m.regs.Rip = addr
	if err := unix.PtraceSetRegs(t.tid, &m.regs); err != nil {
		m.resumeOthers(sp, t)
		return
	}
	if err := tab.DisarmIn(sp.mem, i); err != nil {
		m.resumeOthers(sp, t)
		return
	}
	sp.dis, sp.disarmed = mp, i
	executed := m.step(t, mp, i, addr)
	if !sp.dead {
		tab.ArmIn(sp.mem, i)
		sp.dis = nil
		if tab.IsNotify(i) && executed {
			// The dynamic linker has changed its list of objects: plant in
			// what it mapped, forget what it unmapped, with the other threads
			// still held.
			m.scanMaps(sp)
		}
	}
	if !executed {
		tab.Unhit(cur, undo)
	}
	if m.threads[t.tid] == t && t.state == stopped && t.held == 0 {
		m.resume(t, 0)
	}
	m.resumeOthers(sp, t)
}

// step single-steps t over the original instruction of site i. It reports
// whether the instruction ran: it did not when a signal handler was entered first
// or a job-control stop intervened; then the thread will trap at the site again
// and be counted then.
func (m *mon) step(t *thread, mp *mapping, i int, addr uint64) bool {
	sig := 0
	handler := false
	for {
		if singleStep(t.tid, sig) != nil {
			return true
		}
		t.state = running
		sig = 0
		ev, err := m.waitFor(t)
		if err != nil {
			return true
		}
		if ev.ws.Exited() || ev.ws.Signaled() {
			m.reap(ev)
			return !handler
		}
		t.state = stopped
		s := ev.ws.StopSignal()
		switch cause := trapCause(ev.ws); cause {
		case unix.PTRACE_EVENT_STOP:
			if isStopSignal(s) {
				// Job-control stop before the instruction ran: leave the thread
				// in the stop; it traps at the site again when continued.
				t.groupStop = true
				return false
			}
			t.groupStop = false
		case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
			m.newTask(t, cause, mp, i)
		case unix.PTRACE_EVENT_VFORK_DONE:
			t.vforkWait = false
		case unix.PTRACE_EVENT_EXEC:
			m.exec(t)
			return true
		case 0:
			if s == unix.SIGTRAP {
				if getSiginfo(t.tid, &m.si) != nil {
					return true
				}
				if m.si.Code <= 0 { // SI_USER, SI_TKILL, SI_QUEUE: a SIGTRAP somebody sent
					m.noteFault(t, s)
					sig = int(s)
					handler = handler || caught(t.tid, s)
					continue
				}
				if handler {
					return false // stopped on the handler's first instruction
				}
				if mp.tab.IsRep(i) {
					if unix.PtraceGetRegs(t.tid, &m.regs) == nil && m.regs.Rip == addr {
						m.finishRep(t, mp, i, addr)
					}
				}
				return true
			}
			m.noteFault(t, s)
			sig = int(s)
			// A fault of the instruction itself counts its entry, whatever
			// the handler then does (Go's recover, longjmp, a crash), as
			// gcov does; only a signal that came before it is undone.
			handler = handler || (!syncFault(s, m.si.Code) && caught(t.tid, s))
		}
	}
}

// syncFault reports whether a signal is a fault of the instruction the thread
// was executing, raised by the CPU (si_code > 0: not sent by a process).
func syncFault(sig syscall.Signal, code int32) bool {
	switch sig {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL:
		return code > 0
	}
	return false
}

// finishRep lets a rep-prefixed string instruction run its remaining iterations
// without a stop per iteration: with the site's byte still out and the other
// threads still held, it plants a temporary int3 after the instruction and
// continues t to it. One execution, one count.
func (m *mon) finishRep(t *thread, mp *mapping, i int, addr uint64) {
	n := mp.tab.InsnLen(i)
	if n == 0 {
		return
	}
	next := addr + uint64(n)
	sp := t.sp
	nmp, j, isSite := sp.lookup(next)
	temp := !(isSite && nmp.tab.Armed(j))
	var orig [1]byte
	if temp {
		if _, err := sp.mem.ReadMemory(next, orig[:]); err != nil {
			return
		}
		if _, err := sp.mem.WriteMemory(next, []byte{breakpoint.Int3}); err != nil {
			return
		}
	}
	restore := func() {
		if temp && !sp.dead {
			sp.mem.WriteMemory(next, orig[:])
		}
	}
	sig := 0
	for {
		if cont(t.tid, sig) != nil {
			restore()
			return
		}
		t.state = running
		sig = 0
		ev, err := m.waitFor(t)
		if err != nil {
			restore()
			return
		}
		if ev.ws.Exited() || ev.ws.Signaled() {
			m.reap(ev)
			restore()
			return
		}
		t.state = stopped
		s := ev.ws.StopSignal()
		switch cause := trapCause(ev.ws); cause {
		case unix.PTRACE_EVENT_STOP:
			if isStopSignal(s) {
				t.groupStop = true
				restore()
				return
			}
		case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
			if c := m.newTask(t, cause, mp, i); c != nil && temp && c != sp {
				c.mem.WriteMemory(next, orig[:])
			}
		case unix.PTRACE_EVENT_EXEC:
			m.exec(t)
			return
		case 0:
			if s == unix.SIGTRAP && getSiginfo(t.tid, &m.si) == nil && m.si.Code == siKernel &&
				unix.PtraceGetRegs(t.tid, &m.regs) == nil && m.regs.Rip-1 == next {
				if temp {
					restore()
					m.regs.Rip = next
					unix.PtraceSetRegs(t.tid, &m.regs)
				} else {
					// A real site follows: count it from the queue, after the
					// int3 at i is back.
					t.held++
					m.queue = append([]event{ev}, m.queue...)
				}
				return
			}
			m.noteFault(t, s)
			sig = int(s)
		}
	}
}

// caught reports whether the thread's process has a handler for sig, from
// /proc/TID/status SigCgt. Only read on the rare path of a signal arriving
// during a step.
func caught(tid int, sig syscall.Signal) bool {
	return signalInMask("/proc/"+strconv.Itoa(tid)+"/status", "SigCgt", int(sig))
}

// stopOthers stops every running thread of sp except t (PTRACE_INTERRUPT) and
// waits until they have all stopped, so none runs past a disarmed site. It
// reports whether any had to be stopped.
//
// Preconditions: on the tracer thread.
func (m *mon) stopOthers(sp *space, t *thread) (held bool) {
	m.cur = sp
	waiting := 0
	for _, u := range sp.threads {
		if u != t && u.state == running && !u.vforkWait {
			// A dead thread answers ESRCH; its exit report ends the wait.
			interrupt(u.tid)
			waiting++
		}
	}
	held = waiting > 0
	for waiting > 0 {
		ev, err := m.wait()
		if err != nil {
			return held
		}
		m.deferEvent(ev)
		waiting = 0
		for _, u := range sp.threads {
			if u != t && u.state == running && !u.vforkWait {
				waiting++
			}
		}
	}
	return held
}

// resumeOthers restarts the threads stopOthers stopped, except those with
// events still queued (the main loop handles those).
func (m *mon) resumeOthers(sp *space, t *thread) {
	m.cur = nil
	for _, u := range sp.threads {
		if u != t && u.state == stopped && u.held == 0 && !u.fresh {
			m.resume(u, 0)
		}
	}
}

// newTask registers a task created by t (a thread, a fork or vfork child, or a
// clone sharing memory) and returns its space. stepping is the site of smp
// disarmed in t's space, or -1: a fork child copied memory with that byte out.
func (m *mon) newTask(t *thread, cause int, smp *mapping, stepping int) *space {
	msg, err := unix.PtraceGetEventMsg(t.tid)
	if err != nil {
		return nil
	}
	tid := int(msg)
	u := &thread{tid: tid, tgid: tid, state: stopped, fresh: true}
	share := false
	switch cause {
	case unix.PTRACE_EVENT_CLONE:
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d", t.tgid, tid)); err == nil {
			u.tgid = t.tgid // a thread: starts afresh, shares everything
			share = true
		} else {
			same, err := kcmpVM(t.tid, tid)
			share = err != nil || same
			u.cursors = cloneCursors(t.cursors)
		}
	case unix.PTRACE_EVENT_VFORK:
		same, err := kcmpVM(t.tid, tid)
		share = err != nil || same
		t.vforkWait = true
		u.cursors = cloneCursors(t.cursors)
	default: // fork
		u.cursors = cloneCursors(t.cursors)
		u.release = m.o.NoFollow
	}
	if share {
		u.sp = t.sp
	} else {
		mem, err := openMem(tid)
		if err != nil {
			// Without its memory we cannot serve it; let it go with our bytes
			// restored is impossible, so kill rather than let it die of SIGTRAP.
			unix.Kill(tid, unix.SIGKILL)
			return nil
		}
		// The child's memory is a copy of the parent's: the same images at
		// the same addresses, with our bytes in place.
		u.sp = &space{mem: mem, tgid: tid, threads: map[int]*thread{}}
		for _, mp := range t.sp.maps {
			c := *mp
			if mp.xol != nil {
				c.xol = mp.xol.clone()
			}
			u.sp.maps = append(u.sp.maps, &c)
		}
		if smp != nil && stepping >= 0 {
			smp.tab.ArmIn(mem, stepping)
		}
		m.res.Processes++
	}
	m.addThread(u)
	if ev, ok := m.orphans[tid]; ok {
		delete(m.orphans, tid)
		u.held++
		m.queue = append(m.queue, ev)
	}
	return u.sp
}

// release lets a forked child go with --no-follow: its copy of the code gets
// every original byte back, then it is detached and runs untraced.
//
// Preconditions: t is in its first ptrace-stop and alone in its space.
func (m *mon) release(t *thread) {
	if !t.sp.dead {
		// A child forked from a relocated syscall starts in its slot.
		if s := m.leaveScratch(t); s != 0 {
			unix.Tgkill(t.tgid, t.tid, unix.Signal(s))
		}
		for _, mp := range t.sp.maps {
			mp.tab.RestoreIn(t.sp.mem)
		}
		m.freeXOL(t.sp, t)
	}
	m.removeThread(t)
	detach(t.tid, 0)
}

// exec follows a task that replaced its program: its process has a new
// address space with none of our bytes, and the other threads of its process
// are gone. The new program and its libraries are planted as Options.Images
// says; the task stays traced even when nothing in it is profiled, so the
// programs it starts in turn are followed (sh -c './a | ./b'). With
// --no-follow a child that execs is let go instead. exec reports whether t is
// still traced; the caller resumes it.
func (m *mon) exec(t *thread) bool {
	if former, err := unix.PtraceGetEventMsg(t.tid); err == nil && int(former) != t.tid {
		// A non-leader thread exec'd; it now has the leader's TID.
		if old := m.threads[int(former)]; old != nil {
			m.removeThread(old)
		}
	}
	for _, u := range m.threads {
		if u != t && u.tgid == t.tgid {
			m.removeThread(u)
		}
	}
	if m.o.NoFollow && t.tgid != m.root {
		m.removeThread(t)
		detach(t.tid, 0)
		return false
	}
	// Leave the old space (a vfork parent may still use it).
	old := t.sp
	delete(old.threads, t.tid)
	if len(old.threads) == 0 && !old.dead {
		old.dead = true
		old.mem.Close()
	}
	mem, err := openMem(t.tgid)
	if err != nil {
		delete(m.threads, t.tid)
		detach(t.tid, 0)
		return false
	}
	sp := &space{mem: mem, tgid: t.tgid, threads: map[int]*thread{t.tid: t}}
	t.sp = sp
	t.cursors = nil
	if err := m.scanMaps(sp); err != nil && debug {
		dbg("exec %d: %v\n", t.tid, err)
	}
	return true
}

// addImage registers img under its path and gives it its id.
func (m *mon) addImage(img *Image) *Image {
	img.id = len(m.imgs)
	m.imgs = append(m.imgs, img)
	m.images[img.Path] = img
	return img
}

// image returns the image to plant for the file at path, asking
// Options.Images the first time.
func (m *mon) image(path string, exe bool) *Image {
	if img, ok := m.images[path]; ok {
		return img
	}
	var img *Image
	if m.o.Images != nil {
		img = m.o.Images(path, exe)
	}
	if img == nil || img.Table == nil || img.Table.Len() == 0 {
		m.images[path] = nil
		return nil
	}
	img.Path = path
	return m.addImage(img)
}

// A region is one executable file mapping read from /proc/PID/maps.
type region struct {
	lo, hi, off uint64
	path        string
}

// readMaps returns the executable mappings of files in process pid.
func readMaps(pid int) ([]region, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return nil, fmt.Errorf("read mappings: %w", err)
	}
	var out []region
	for _, line := range strings.Split(string(b), "\n") {
		// start-end perms offset dev inode path  (proc(5))
		f := strings.Fields(line)
		if len(f) < 6 || len(f[1]) < 3 || f[1][2] != 'x' || !strings.HasPrefix(f[5], "/") {
			continue
		}
		if len(f) > 6 {
			continue // "(deleted)": the file is gone, nothing to analyse
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		r := region{path: f[5]}
		var e1, e2, e3 error
		r.lo, e1 = strconv.ParseUint(lo, 16, 64)
		r.hi, e2 = strconv.ParseUint(hi, 16, 64)
		r.off, e3 = strconv.ParseUint(f[2], 16, 64)
		if e1 != nil || e2 != nil || e3 != nil {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// scanMaps brings sp's mappings up to date with the process's: images newly
// mapped are planted, images no longer mapped are forgotten (their code is
// gone, with our bytes in it). It returns an error only when the root image
// could not be planted. (The out-of-line engine maps a module's scratch
// region later, at its first hit: see hitXOL.)
//
// Preconditions: on the tracer thread; no thread of sp runs.
func (m *mon) scanMaps(sp *space) error {
	regions, err := readMaps(sp.tgid)
	if err != nil {
		return err
	}
	for _, mp := range sp.maps {
		mp.seen = false
	}
	exe, _ := os.Readlink("/proc/" + strconv.Itoa(sp.tgid) + "/exe")
	var rootErr error
	for k := 0; k < len(regions); {
		r := regions[k]
		lo, hi := r.lo, r.hi
		j := k + 1
		for ; j < len(regions) && regions[j].path == r.path; j++ {
			hi = max(hi, regions[j].hi)
		}
		k = j
		var known *mapping
		for _, mp := range sp.maps {
			if mp.Image.Path == r.path && mp.Lo == lo {
				known = mp
			}
		}
		if known != nil {
			known.seen = true
			known.Hi = hi
			continue
		}
		img := m.image(r.path, r.path == exe)
		if img == nil {
			continue
		}
		var bias uint64
		if img.LinkAddr != nil {
			link, ok := img.LinkAddr(r.off)
			if !ok {
				continue
			}
			bias = r.lo - link
		} else {
			// The root image without segment information: its bias from
			// the entry point the kernel used.
			if bias, err = loadBias(sp.tgid, m.o.Entry); err != nil {
				if img == m.rootImg {
					rootErr = err
				}
				continue
			}
		}
		mp := &mapping{Mapped: Mapped{Image: img, Bias: bias, Lo: lo, Hi: hi}, tab: img.Table.At(bias), seen: true}
		if err := mp.tab.Plant(sp.mem); err != nil {
			if img == m.rootImg {
				rootErr = err
			}
			if debug {
				dbg("plant %s: %v\n", img.Path, err)
			}
			continue
		}
		sp.maps = append(sp.maps, mp)
	}
	kept := sp.maps[:0]
	for _, mp := range sp.maps {
		if mp.seen {
			kept = append(kept, mp)
		}
	}
	clear(sp.maps[len(kept):])
	sp.maps = kept
	return rootErr
}
