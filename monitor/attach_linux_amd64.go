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
