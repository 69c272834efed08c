//go:build linux && amd64

package monitor

import (
	"fmt"
	"maps"
	"os"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/relocate"
	"golang.org/x/sys/unix"
)

// A tstate is where a thread is with respect to ptrace.
type tstate uint8

const (
	running   tstate = iota // resumed by us; may report a stop at any time
	stopped                 // in a ptrace-stop we have not ended
	listening               // in group-stop, restarted with PTRACE_LISTEN: runs no code
)

// A thread is one traced task (a thread, or the only thread of a process).
// Its ptrace state is state; the flags say what else is known about it, and
// the predicates below combine them.
type thread struct {
	tid, tgid   int
	mm          *space // its address space
	state       tstate
	fresh       bool // created; its initial ptrace-stop not yet seen
	gateOwed    int  // SIGSTOPs its gates sent that are still pending (gate_linux_amd64.go)
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
	// inCreate: stopped at the clone or fork event of the call it is in.
	inCreate bool
	// created is the new task's ID of a clone or fork event stop that the
	// attach ran on past (finishCreate) before the event was handled; the
	// kernel's event message is gone by then. 0 if none.
	created uint
	// The thread's last out-of-line hit, to undo when a signal takes it out
	// of the slot before the displaced instruction ran.
	xolMap  *mapping
	xolSite int
	xolUndo breakpoint.Undo
	xolCur  *breakpoint.Cursor
	cursors []breakpoint.Cursor // line-entry position per image (Image.id)
	slab    int                 // 1 + its counter slab (in-process engine), 0 for none
	pend    pendCall            // its pending indirect call while it has no slab

	// The program's signal state (sigstate_linux_amd64.go): its process's
	// dispositions (shared by its threads), its blocked mask, and the
	// rt_sigaction being made.
	sigs     *sigTable
	mask     uint64
	trapped  bool // a trap of ours since the last repair
	sysEntry bool // a syscall-entry-stop seen, its exit not yet
	// kicked: we interrupted the thread (PTRACE_INTERRUPT) and its
	// interrupt stop has not come yet; until it does, the interrupt is
	// pending, and a system call the thread is in or enters may end in an
	// EINTR of ours, not the program's (unkick).
	kicked  bool
	atEntry bool   // in a syscall-entry-stop
	sysNr   uint64 // the system call of the last syscall-entry-stop
	pendSig int
	pendAct sigAction
	// pendMask, with pendMaskSet, is the blocked mask the call the
	// filter stopped the thread at sets (exitIdle), taken as it resumes.
	pendMask    uint64
	pendMaskSet bool
	onTerm      bool // in a system call on patchprof's terminal (termEntry)
	// loading: resumed next without system-call stops, into the dynamic
	// linker's mapping window (loader_linux_amd64.go).
	loading bool
	// untraced: last resumed without system-call stops (PTRACE_CONT), so
	// the exit of a call it is in is not seen (unkickAtStop).
	untraced bool
	// strict: in seccomp strict mode, emulated by the monitor over its
	// filter (sysfilter_linux_amd64.go).
	strict bool
	// allCalls: its process holds a descriptor on patchprof's terminal
	// that the filter does not know, so it stops at every system call,
	// as without the filter (termDup).
	allCalls bool
	// textCall is a system call changing code, from its entry to its
	// exit (textchange_linux_amd64.go).
	textCall *textCall
	// idleExit: the call the filter stopped the thread at leaves the
	// monitor nothing to do at its exit (exitIdle), so it runs untraced.
	idleExit bool
	// frames are the program's signal handlers the thread was sent into
	// and has not returned from through rt_sigreturn, innermost last.
	// noted is 1 + the index in Result.Handled of the fault of the
	// current signal-delivery-stop, 0 for none (handled_linux_amd64.go).
	frames []frame
	noted  int
}

// runsCode reports whether t may execute code at any moment: resumed, and
// not blocked in vfork (a vfork parent runs no code until its child execs or
// exits, so it need not, and cannot promptly, be stopped).
func (t *thread) runsCode() bool { return t.state == running && !t.vforkWait }

// idle reports whether t is stopped with nothing left to do: no event of it
// queued, and not a new task whose first stop is still to come.
func (t *thread) idle() bool { return t.state == stopped && t.held == 0 && !t.fresh }

// canInject reports whether a system call may be run through t (syscallIn):
// stopped, and not inside a system call the kernel would finish over it.
func (t *thread) canInject() bool { return t.state == stopped && !t.inSyscall && !t.fresh }

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
	// temp is the address of a temporary int3 (finishRep), 0 if none, and
	// tempOrig the byte it replaced.
	temp     uint64
	tempOrig byte
	dead     bool           // no thread uses it any more; mem is closed
	ctr      *counterMem    // the in-process engine's counters, nil if none
	noJump   bool           // the in-process engine is off here (see tryJump)
	eager    bool           // every site is patched at once (eager_linux_amd64.go)
	gated    bool           // a gate is written in its code (gate_linux_amd64.go); a fork's copy has it too
	pcs      map[int]uint64 // the threads' PCs while they are patched at once (pcOf)
	quiet    bool           // eager, and no int3 of ours is planted: no system-call stops
	guard    guard          // what the program's seccomp and GS use allow (guard_linux_amd64.go)
	audit    int8           // LD_AUDIT set: 1, not: -1, not read yet: 0 (audited)
}

// plantTemp writes a temporary int3 at addr.
//
// Preconditions: on the tracer thread; no other temporary int3 is in mm.
func (mm *space) plantTemp(addr uint64) error {
	var orig [1]byte
	if _, err := mm.mem.ReadMemory(addr, orig[:]); err != nil {
		return err
	}
	if _, err := mm.mem.WriteMemory(addr, []byte{relocate.Int3}); err != nil {
		return err
	}
	mm.temp, mm.tempOrig = addr, orig[0]
	return nil
}

// removeTemp puts back the byte under the temporary int3, if any.
func (mm *space) removeTemp() error {
	if mm.temp == 0 {
		return nil
	}
	addr := mm.temp
	mm.temp = 0
	if mm.dead {
		return nil
	}
	_, err := mm.mem.WriteMemory(addr, []byte{mm.tempOrig})
	return err
}

func (m *mon) addThread(t *thread) {
	m.threads[t.tid] = t
	t.mm.threads[t.tid] = t
	m.res.Threads++
}

// removeThread forgets t; its address space dies with its last thread.
func (m *mon) removeThread(t *thread) {
	delete(m.threads, t.tid)
	t.dropSlab()
	m.termGone(t)
	m.leaveSpace(t)
}

// leaveSpace takes t out of its address space, which dies (its memory file
// closed) with its last thread.
func (m *mon) leaveSpace(t *thread) {
	mm := t.mm
	delete(mm.threads, t.tid)
	if len(mm.threads) == 0 && !mm.dead {
		mm.dead = true
		m.dropCounters(mm)
		if err := mm.mem.Close(); err != nil {
			m.lose(fmt.Errorf("close the memory of process %d: %w", mm.tgid, err))
		}
	}
}

// newTask registers the task that t has just created (a thread, a fork or
// vfork child, or a clone sharing memory), as its event stop cause says.
// A child with memory of its own gets a copy of t's memory as it is now: if
// t is in the middle of a classic step or a rep (mm.dis, mm.temp), the
// child's copy is given back the state at rest.
//
// Preconditions: on the tracer thread; t is in the event stop.
func (m *mon) newTask(t *thread, cause int) {
	msg, err := unix.PtraceGetEventMsg(t.tid)
	if t.created != 0 {
		msg, err, t.created = t.created, nil, 0
	}
	if err != nil {
		m.lose(fmt.Errorf("read the new task of thread %d: %w", t.tid, err))
		return
	}
	tid := int(msg)
	u := &thread{tid: tid, tgid: tid, state: stopped, fresh: true, allCalls: t.allCalls}
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
	default: // fork, or a clone whose exit signal is SIGCHLD
		u.cursors = cloneCursors(t.cursors)
		// clone(CLONE_VM | SIGCHLD) reports as a fork but shares the
		// parent's memory, planted bytes included: it is served as a
		// thread of that space, even with --no-follow, since letting it go
		// would take the int3s from its parent too.
		same, err := kcmpVM(t.tid, tid)
		share = err == nil && same
		u.release = m.o.NoFollow && !share
	}
	// A new task starts with its creator's mask; a thread shares its
	// process's dispositions, a process gets a copy.
	u.mask = t.mask
	if t.sigs != nil {
		u.sigs = t.sigs
		if u.tgid != t.tgid {
			u.sigs = t.sigs.clone()
		}
	}
	if share {
		u.mm = t.mm
	} else if u.mm, err = m.forkSpace(t.mm, tid); err != nil {
		// Without its memory we cannot serve it, nor restore its code
		// to let it go: kill it rather than let it die of SIGTRAP.
		m.lose(fmt.Errorf("follow process %d (killed): %w", tid, err))
		if err := unix.Kill(tid, unix.SIGKILL); err != nil && !gone(err) {
			m.lose(fmt.Errorf("kill process %d: %w", tid, err))
		}
		return
	}
	m.addThread(u)
	if ev, ok := m.orphans[tid]; ok {
		delete(m.orphans, tid)
		u.held++
		m.queue = append(m.queue, ev)
	}
}

// forkSpace returns the address space of process tid, forked from parent:
// a copy of the parent's memory, so the same images at the same addresses,
// with our bytes in place.
func (m *mon) forkSpace(parent *space, tid int) (*space, error) {
	mem, err := openMem(tid)
	if err != nil {
		return nil, err
	}
	mm := &space{mem: mem, tgid: tid, threads: map[int]*thread{}}
	for _, mp := range parent.maps {
		c := *mp
		if mp.xol != nil {
			c.xol = mp.xol.clone()
		}
		if mp.jmp != nil {
			c.jmp = mp.jmp.clone()
		}
		c.lazyDone = maps.Clone(mp.lazyDone)
		mm.maps = append(mm.maps, &c)
	}
	if parent.dis != nil {
		// Forked during a classic step: the child copied the site's byte out.
		if err := parent.dis.tab.ArmIn(mem, parent.disarmed); err != nil {
			m.lose(fmt.Errorf("re-arm the site at %#x in process %d: %w", parent.dis.tab.RuntimeAddr(parent.disarmed), tid, err))
		}
	}
	if parent.temp != 0 {
		// Forked during a rep: the child copied the temporary int3.
		if _, err := mem.WriteMemory(parent.temp, []byte{parent.tempOrig}); err != nil {
			m.lose(fmt.Errorf("remove the temporary breakpoint at %#x in process %d: %w", parent.temp, tid, err))
		}
	}
	if c := parent.ctr; c != nil {
		// The child maps its parent's counters (MAP_SHARED): it gets its
		// own before it runs (ownCounters).
		mm.ctr = &counterMem{base: c.base, slabSize: c.slabSize, mem: c.mem, used: make([]bool, maxSlabs), top: c.top, inherited: true}
	}
	mm.noJump = parent.noJump
	mm.gated = parent.gated // its copy of the code holds the gates
	m.res.Processes++
	m.notifyLayout(mm)
	return mm, nil
}

// release lets a forked child go with --no-follow: its copy of the code gets
// every original byte back, then it is detached and runs untraced.
//
// Preconditions: t is in its first ptrace-stop and alone in its space.
func (m *mon) release(t *thread) {
	if !t.mm.dead {
		// A child forked from a relocated syscall starts in its slot.
		m.resend(t, m.leaveScratch(t, true))
		m.unjump(t.mm)
		for _, mp := range t.mm.maps {
			if err := mp.tab.RestoreIn(mp.memIn(t.mm)); err != nil {
				m.leaveChanged(fmt.Errorf("restore the code of process %d before letting it go: %w", t.tgid, err))
			}
		}
		m.freeXOL(t.mm, t)
		m.freeJump(t.mm, t) // a child let go at its first stop: no other thread to try
	}
	m.removeThread(t)
	m.detach(t, 0)
}

// detach lets thread t go, delivering sig.
func (m *mon) detach(t *thread, sig int) {
	if t.state == stopped {
		m.repair(t)
	}
	if err := detach(t.tid, sig); err != nil {
		m.lose(fmt.Errorf("detach thread %d: %w", t.tid, err))
	}
}

// resend sends signal sig (if not 0) to t again: it arrived while the
// monitor had t execute something of its own.
func (m *mon) resend(t *thread, sig int) {
	if sig == 0 {
		return
	}
	if err := unix.Tgkill(t.tgid, t.tid, unix.Signal(sig)); err != nil {
		m.lose(fmt.Errorf("send signal %d back to thread %d: %w", sig, t.tid, err))
	}
}

// exec follows a task that replaced its program: its process has a new
// address space with none of our bytes, and the other threads of its process
// are gone. The new program and its libraries are planted as Options.Images
// says; the task stays traced even when nothing in it is profiled, so the
// programs it starts in turn are followed (sh -c './a | ./b'). With
// --no-follow a child that execs is let go instead (m.traced tells).
//
// Preconditions: on the tracer thread; t is in its exec event stop.
func (m *mon) exec(t *thread) {
	if former, err := unix.PtraceGetEventMsg(t.tid); err == nil && int(former) != t.tid {
		// A non-leader thread exec'd; it now has the leader's TID.
		if old := m.threads[int(former)]; old != nil {
			m.abandonHandlers(old)
			m.removeThread(old)
		}
	}
	m.abandonHandlers(t)
	for _, u := range m.threads {
		if u != t && u.tgid == t.tgid {
			m.abandonHandlers(u)
			m.removeThread(u)
		}
	}
	if m.o.NoFollow && t.tgid != m.root {
		m.removeThread(t)
		m.detach(t, 0)
		return
	}
	// Leave the old space (a vfork parent may still use it). The exec reset
	// the thread's GS base.
	t.dropSlab()
	m.leaveSpace(t)
	mem, err := openMem(t.tgid)
	if err != nil {
		m.lose(fmt.Errorf("follow the exec of process %d (let go): %w", t.tgid, err))
		delete(m.threads, t.tid)
		m.detach(t, 0)
		return
	}
	t.mm = &space{mem: mem, tgid: t.tgid, threads: map[int]*thread{t.tid: t}}
	t.cursors = nil
	m.termExec(t)
	if t.sigs != nil {
		t.sigs = t.sigs.clone() // the exec unshares a table shared with other processes
		t.sigs.execReset()
	}
	if err := m.scanMaps(t.mm); err != nil {
		m.lose(fmt.Errorf("plant process %d after its exec: %w", t.tgid, err))
	}
}
