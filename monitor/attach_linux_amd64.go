//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/breakpoint"
	"golang.org/x/sys/unix"
)

// attachOptions are traceOptions without PTRACE_O_EXITKILL: an operator's
// daemon must not die because patchprof did.
const attachOptions = traceOptions &^ unix.PTRACE_O_EXITKILL

// CheckAttach tells, before anything is done, why pid cannot be attached to.
func CheckAttach(pid int) error {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return fmt.Errorf("%w: %d (check the PID with ps)", ErrNoProcess, pid)
	}
	for p := os.Getpid(); p > 1; {
		if p == pid {
			return fmt.Errorf("%w (PID %d)", ErrOwnProcess, pid)
		}
		pp, err := parentOf(p)
		if err != nil {
			break
		}
		p = pp
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			if strings.HasPrefix(v, "Z") {
				return fmt.Errorf("%w: %d has exited and waits for its parent to reap it", ErrZombie, pid)
			}
		case "TracerPid":
			if v != "0" {
				name, _ := os.ReadFile("/proc/" + v + "/comm")
				return fmt.Errorf("%w: %d is traced by %s (PID %s): detach that tracer first", ErrAlreadyTraced, pid, strings.TrimSpace(string(name)), v)
			}
		}
	}
	return nil
}

func parentOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name in parentheses may contain spaces: read after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, errors.New("short stat")
	}
	return strconv.Atoi(f[1])
}

// attachAll seizes every thread of pid and stops it. Threads are listed from
// /proc/PID/task until a pass finds no new one, since threads can be created
// while we attach (those created by an already seized thread are attached by
// the kernel, PTRACE_O_TRACECLONE). It returns the threads and the stops that
// were not our interrupt (a signal arriving meanwhile), to be handled first.
//
// Preconditions: on the locked tracer thread.
func attachAll(pid int) (int, []int, []event, error) {
	if err := CheckAttach(pid); err != nil {
		return 0, nil, nil, err
	}
	seized := map[int]bool{}
	var order []int
	for {
		entries, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			if len(order) == 0 {
				return 0, nil, nil, fmt.Errorf("%w: %d", ErrNoProcess, pid)
			}
			break
		}
		added := false
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || seized[tid] {
				continue
			}
			if err := seize(tid, attachOptions); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // exited meanwhile
				}
				for _, t := range order {
					detach(t, 0)
				}
				if errors.Is(err, unix.EPERM) {
					return 0, nil, nil, notPermitted(err)
				}
				return 0, nil, nil, fmt.Errorf("seize thread %d: %w", tid, err)
			}
			interrupt(tid)
			seized[tid] = true
			order = append(order, tid)
			added = true
		}
		if !added {
			break
		}
	}
	var pending []event
	waiting := len(order)
	stoppedOK := map[int]bool{}
	for waiting > 0 {
		var ws unix.WaitStatus
		tid, err := unix.Wait4(-1, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, nil, nil, fmt.Errorf("wait for %d to stop: %w", pid, err)
		}
		ev := event{tid: tid, ws: ws}
		switch {
		case !seized[tid]:
			pending = append(pending, ev) // a thread born while attaching
		case ws.Exited() || ws.Signaled():
			delete(seized, tid)
			waiting--
			if tid == pid {
				return 0, nil, nil, fmt.Errorf("%w: %d exited while patchprof attached", ErrNoProcess, pid)
			}
		case stoppedOK[tid]:
			pending = append(pending, ev)
		default:
			stoppedOK[tid] = true
			waiting--
			if trapCause(ws) != unix.PTRACE_EVENT_STOP || isStopSignal(ws.StopSignal()) {
				pending = append(pending, ev)
			}
		}
	}
	var tids []int
	for _, tid := range order {
		if seized[tid] {
			tids = append(tids, tid)
		}
	}
	return pid, tids, pending, nil
}

// wake ends the tracer thread's blocking wait4(-1): it starts a child that
// exits at once, whose exit wait4 reports. (ptrace requests can only come from
// the tracer thread, and Go restarts interrupted system calls, so a signal
// cannot do it.)
func wake() {
	self, err := os.Executable()
	if err != nil {
		return
	}
	p, err := os.StartProcess(self, []string{"patchprof-waker"}, &os.ProcAttr{Env: []string{wakerEnv}})
	if err == nil {
		p.Release()
	}
}

// detachAll ends profiling of a running target: it stops every thread, puts
// back every original byte in every address space, rewinds threads that had
// trapped on a site so they execute the real instruction, and detaches each
// thread, handing back any signal it was about to receive.
//
// Preconditions: on the tracer thread, with no step in progress.
func (m *mon) detachAll() {
	sig := map[int]int{}
	// Handle what is queued: register new tasks, note signals and traps.
	settle := func(ev event) {
		t, was, ok := m.accept(ev)
		if !ok {
			return
		}
		s := ev.ws.StopSignal()
		switch cause := trapCause(ev.ws); cause {
		case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
			m.newTask(t, cause, nil, -1)
		case unix.PTRACE_EVENT_VFORK_DONE:
			t.vforkWait = false
		case unix.PTRACE_EVENT_EXEC:
			m.exec(t)
		case unix.PTRACE_EVENT_STOP:
			m.eventStop(t, was, s)
		case 0:
			if s == unix.SIGTRAP && getSiginfo(t.tid, &m.si) == nil && m.si.Code == siKernel &&
				unix.PtraceGetRegs(t.tid, &m.regs) == nil {
				if mp, i, ok := t.sp.lookup(m.regs.Rip - 1); ok && mp.tab.Armed(i) && mp.tab.OriginalByte(i) != breakpoint.Int3 {
					m.regs.Rip--
					unix.PtraceSetRegs(t.tid, &m.regs)
					return
				}
			}
			if !(s == unix.SIGCONT && t.swallowCont) {
				sig[t.tid] = int(s)
			}
		}
	}
	for {
		for len(m.queue) > 0 {
			ev := m.queue[0]
			m.queue = m.queue[1:]
			if t := m.threads[ev.tid]; t != nil && t.held > 0 {
				t.held--
			}
			settle(ev)
		}
		for tid, ev := range m.orphans {
			if m.threads[tid] != nil {
				delete(m.orphans, tid)
				settle(ev)
			}
		}
		busy := 0
		for _, t := range m.threads {
			if t.state == running && !t.vforkWait {
				interrupt(t.tid)
				busy++
			}
		}
		if busy == 0 {
			break
		}
		for busy > 0 {
			ev, err := m.wait()
			if err != nil {
				break
			}
			if t := m.threads[ev.tid]; t != nil && t.state == running {
				busy--
			}
			settle(ev)
		}
	}
	// A thread in a slot of the out-of-line engine goes back to the
	// equivalent original address (or steps out), before the regions go.
	for _, t := range m.threads {
		if t.state == stopped && !t.sp.dead {
			if s := m.leaveScratch(t); s != 0 {
				if sig[t.tid] == 0 {
					sig[t.tid] = s
				} else {
					unix.Tgkill(t.tgid, t.tid, unix.Signal(s))
				}
			}
		}
	}
	done := map[*space]bool{}
	for _, t := range m.threads {
		if !t.sp.dead && !done[t.sp] {
			done[t.sp] = true
			for _, mp := range t.sp.maps {
				mp.tab.RestoreIn(t.sp.mem)
			}
		}
	}
	groupStopped := map[int]bool{}
	for _, t := range m.threads {
		if t.groupStop {
			groupStopped[t.tgid] = true
		}
	}
	// A thread can have executed an int3 and been stopped by our interrupt
	// before its SIGTRAP was dequeued: the signal is still pending and would
	// kill the process after the detach. Let the kernel dequeue it now (a
	// synchronous signal is dequeued before any other, and before any user
	// instruction runs), and rewind the thread onto the restored instruction.
	for _, t := range m.threads {
		if t.state != stopped || sig[t.tid] != 0 || !sigtrapPending(t.tgid, t.tid) {
			continue
		}
		if cont(t.tid, 0) != nil {
			continue
		}
		var ws unix.WaitStatus
		if waitPid(t.tid, &ws, unix.WALL) != nil || !ws.Stopped() {
			continue
		}
		if trapCause(ws) == 0 {
			// settle rewinds a trap at one of our sites and records any
			// other signal to hand back at the detach.
			settle(event{tid: t.tid, ws: ws})
		}
	}
	freed := map[*space]bool{}
	for _, t := range m.threads {
		if t.state == stopped && !t.inSyscall && !t.sp.dead && !freed[t.sp] {
			freed[t.sp] = true
			m.freeXOL(t.sp, t)
		}
	}
	for _, img := range m.imgs {
		img.Table.Unplant()
	}
	tgids := map[int]bool{}
	for _, t := range m.threads {
		tgids[t.tgid] = true
		if t.state == listening {
			// A PTRACE_LISTEN tracee is not in a ptrace-stop: stop it so it
			// can be detached; it stays in its group-stop after.
			interrupt(t.tid)
			var ws unix.WaitStatus
			waitPid(t.tid, &ws, unix.WALL)
		}
		detach(t.tid, sig[t.tid])
	}
	// A process that was running must not be left stopped by the detach
	// (ptrace(2), "PTRACE_DETACH": a stop can be left pending); one in a
	// job-control stop stays stopped, as without patchprof.
	for tgid := range tgids {
		if !groupStopped[tgid] && processState(tgid) == 'T' {
			unix.Kill(tgid, unix.SIGCONT)
		}
	}
}

// sigtrapPending reports whether SIGTRAP is pending for the thread itself
// (/proc/PID/task/TID/status, SigPnd).
func sigtrapPending(tgid, tid int) bool {
	return signalInMask(fmt.Sprintf("/proc/%d/task/%d/status", tgid, tid), "SigPnd", int(unix.SIGTRAP))
}

// processState returns the state letter of /proc/PID/stat ('R', 'S', 'T', ...).
func processState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0
	}
	return s[i+2]
}
