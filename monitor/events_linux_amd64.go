//go:build linux && amd64

package monitor

// Waiting for the next event of the traced tasks: the events deferred
// while the monitor served one thread come first, then waitpid's, polled
// for a moment before blocking while the target runs on another CPU.

import (
	"golang.org/x/sys/unix"
)

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
	if m.isamp != nil {
		return m.waitOrTick()
	}
	return m.wait()
}

// wait returns the next wait status of any traced task.
func (m *mon) wait() (event, error) {
	var ws unix.WaitStatus
	// A thread just resumed from a stop of ours (a system call's entry or
	// exit, a trap) mostly stops again within microseconds: polling for
	// that while it runs on another CPU saves the wake-up of a blocked
	// tracer. On the development VM a program writing a byte 20,000 times
	// ran in 1.4 s instead of 1.9 (two stops a call, unpinned). Never with
	// the target on the tracer's own CPU (--pin), where polling would only
	// delay it.
	for range m.spin {
		tid, err := unix.Wait4(-1, &ws, unix.WALL|unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || tid != 0 {
			return event{tid: tid, ws: ws}, err
		}
	}
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
	st := decodeStatus(ev.ws)
	if st.kind == stopGone {
		m.reap(ev.tid, st)
		return
	}
	u := m.threads[ev.tid]
	if u == nil {
		m.queue = append(m.queue, ev)
		return
	}
	was := u.state
	u.state = stopped
	u.inSyscall = st.inSyscall()
	u.atEntry = false
	if u.mm == m.cur && st.kind == stopEvent {
		if m.isamp != nil {
			m.isamp.forget(u.tid)
		}
		// Absorbed: the thread stays stopped until resumeOthers.
		m.eventStop(u, was, st.sig)
		return
	}
	u.held++
	m.queue = append(m.queue, ev)
}
