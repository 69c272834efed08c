//go:build linux && amd64

package monitor

import (
	"fmt"
	"os"

	"github.com/patchprof/patchprof/breakpoint"
	"golang.org/x/sys/unix"
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
