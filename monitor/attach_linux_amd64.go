//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

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
// were not our interrupt (a signal arriving meanwhile, or the event stop of
// a clone, fork or exec under way: see noteFirstStops), to be handled first.
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
		names := make([]string, len(entries))
		for k, e := range entries {
			names[k] = e.Name()
		}
		added := false
		for _, tid := range leaderFirst(pid, names) {
			if seized[tid] {
				continue
			}
			if err := seize(tid, attachOptions); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // exited meanwhile
				}
				if errors.Is(err, unix.EPERM) && seized[pid] && tid != pid {
					// The leader was seized, so permission is not what
					// failed: the kernel refuses a thread that is exiting
					// (ptrace_attach, exit_state). Its end comes next.
					continue
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
			if st := decodeStatus(ws); st.kind != stopEvent || st.jobControl() {
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

// leaderFirst returns the thread IDs of a /proc/PID/task listing (names),
// the leader's (pid) first. An EPERM from another thread is taken for one
// that is exiting only once the leader was seized; os.ReadDir sorts by
// name, so a thread whose ID has fewer digits than the leader's, or more
// with a smaller first digit (IDs wrap at pid_max), used to come first,
// and an exiting one failed the attach as "ptrace not permitted".
func leaderFirst(pid int, names []string) []int {
	tids := make([]int, 0, len(names))
	for _, n := range names {
		tid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if tid == pid {
			tids = append([]int{tid}, tids...)
		} else {
			tids = append(tids, tid)
		}
	}
	return tids
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

// noteFirstStops records what the threads' first stops at the attach say
// (first: those that were not our interrupt), and returns them by thread. A
// thread that was stopped inside clone, fork, vfork or exec (its event stop
// came before our interrupt, which the kernel then drops: any trap clears a
// pending interrupt) has not returned from that call: resumed, the kernel
// finishes it and writes its result into rax, over a system call injected
// there. Such a stop was once taken for a clean one, and rt_sigaction run
// over a clone3 returned the new thread's ID as the call number (ENOSYS),
// and clone3 returned ENOSYS to glibc, which made the thread a second time
// with clone: two threads on one stack, and the target's exit(0) when the
// second one ended ("the last thread").
//
// Preconditions: on the tracer thread; the threads are registered.
func (m *mon) noteFirstStops(first []event) map[int]stop {
	stops := map[int]stop{}
	for _, ev := range first {
		t := m.threads[ev.tid]
		if t == nil {
			continue // a thread born while attaching: its parent's event registers it
		}
		st := decodeStatus(ev.ws)
		stops[ev.tid] = st
		t.inSyscall = st.inSyscall()
	}
	return stops
}

// injector returns the thread through which the attach runs its system
// calls: one stopped by our interrupt (the leader, the longest-lived, if it
// can), else one that created a task at the attach, run on past that system
// call (finishCreate), else one stopped for another reason (a signal), which
// the injected call resumes.
//
// Preconditions: on the tracer thread; every thread of pid is registered
// and stopped; first are their stops at the attach (noteFirstStops).
func (m *mon) injector(pid int, first map[int]stop) (*thread, error) {
	var best, created *thread
	rank := 0
	for _, t := range m.threads {
		st, reported := first[t.tid]
		r := 0
		switch {
		case t.canInject() && !reported && t.tid == pid:
			r = 3
		case t.canInject() && !reported:
			r = 2
		case t.canInject():
			r = 1
		case st.kind == stopNewTask && st.event != unix.PTRACE_EVENT_VFORK:
			// Not a vfork: that call returns only when the child, held
			// stopped by us, execs or exits.
			created = t
		}
		if r > rank {
			best, rank = t, r
		}
	}
	if rank < 2 && created != nil {
		if err := m.finishCreate(created); err != nil {
			return nil, err
		}
		return created, nil
	}
	if best == nil {
		return nil, errors.New("no thread can run a system call (each is inside one)")
	}
	return best, nil
}

// finishCreate runs t, in the event stop of a clone or fork, to that system
// call's syscall-exit-stop (PTRACE_SYSCALL), where the call is done and a
// system call can be injected. The new task's ID is kept for newTask, which
// handles the event later. No signal stop can come first: signals are
// delivered after the exit's report, on the way to user mode.
//
// Preconditions: on the tracer thread; t is in a PTRACE_EVENT_CLONE or
// PTRACE_EVENT_FORK stop, and its event is queued.
func (m *mon) finishCreate(t *thread) error {
	msg, err := unix.PtraceGetEventMsg(t.tid)
	if err != nil {
		return fmt.Errorf("read the new task of thread %d: %w", t.tid, err)
	}
	if err := m.leaveCreate(t); err != nil {
		return err
	}
	t.created = msg
	return nil
}

// prePlan analyses the files pid has mapped (its executable's table is
// Options.Table, made before the run) while it still runs: the attach's
// scanMaps then finds each image made, and the process is stopped only to
// plant. A file mapped between this read and the attach is analysed then.
// The executable's trampolines are built then too (buildAhead).
//
// Preconditions: on the tracer thread, before the attach.
func (m *mon) prePlan(pid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return // the attach says why
	}
	regions := parseMaps(b)
	exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	for _, r := range regions {
		if r.path != exe {
			m.image(r.path, false)
		}
	}
	m.buildAhead(pid, regions, allRanges(b), exe)
}
