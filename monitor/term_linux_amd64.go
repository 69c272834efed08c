//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"strconv"

	"golang.org/x/sys/unix"
)

// The target's use of patchprof's terminal (Options.Terminal).
//
// Every thread stops at the entry and exit of its system calls, so the
// monitor sees a write to the terminal before it runs. Whether a descriptor
// is the terminal is read from /proc/TID/fd/N (a stat through the magic
// link: its character device) and kept per process and descriptor, because a
// stat per write would cost a system call each time; the answers of a process
// are dropped when its descriptor table changes under them (close, dup2,
// dup3, close_range, exec) and when it ends.

// System calls that move bytes to or from a descriptor, and those that
// change what a descriptor refers to (x86-64 numbers, arch/x86/entry/syscalls/
// syscall_64.tbl).
const (
	sysRead          = 0
	sysWrite         = 1
	sysClose         = 3
	sysPread64       = 17
	sysPwrite64      = 18
	sysReadv         = 19
	sysWritev        = 20
	sysDup2          = 33
	sysSendfile      = 40
	sysExecve        = 59
	sysSplice        = 275
	sysDup3          = 292
	sysPreadv        = 295
	sysPwritev       = 296
	sysExecveat      = 322
	sysCopyFileRange = 326
	sysPreadv2       = 327
	sysPwritev2      = 328
	sysCloseRange    = 436
)

// devTTY is the device number of /dev/tty (5, 0), which is whatever the
// process's controlling terminal is: taken to be patchprof's.
var devTTY = unix.Mkdev(5, 0)

// A termWatch decides which of the target's descriptors are patchprof's
// terminal.
type termWatch struct {
	rdev  uint64               // the terminal's device number
	known map[int]map[int]bool // by TGID, then descriptor: on the terminal
	buf   [16 * 8]byte         // iovecs read from the target
}

// newTermWatch returns the watch of o's terminal, nil when there is none to
// watch.
func newTermWatch(o *Terminal) *termWatch {
	if o == nil || o.File == nil || o.Enter == nil || o.Leave == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(o.File.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return nil
	}
	return &termWatch{rdev: st.Rdev, known: map[int]map[int]bool{}}
}

// isTerm reports whether descriptor fd of thread t is the terminal.
func (w *termWatch) isTerm(t *thread, fd uint64) bool {
	if fd > 1<<30 {
		return false
	}
	fds := w.known[t.tgid]
	if on, ok := fds[int(fd)]; ok {
		return on
	}
	var st unix.Stat_t
	path := "/proc/" + strconv.Itoa(t.tid) + "/fd/" + strconv.Itoa(int(fd))
	if err := unix.Stat(path, &st); err != nil {
		// Not open (the call fails with EBADF): nothing to keep, the
		// descriptor may be opened next.
		return false
	}
	on := st.Mode&unix.S_IFMT == unix.S_IFCHR && (st.Rdev == w.rdev || st.Rdev == devTTY)
	if fds == nil {
		fds = map[int]bool{}
		w.known[t.tgid] = fds
	}
	fds[int(fd)] = on
	return on
}

// termEntry calls Terminal.Enter when t is at the entry of a system call
// that writes to or reads from the terminal.
//
// Preconditions: on the tracer thread; t is in a syscall-entry-stop of si.
func (m *mon) termEntry(t *thread, si *syscallInfo) {
	if m.o.Terminal == nil || t.onTerm {
		return
	}
	if m.term == nil {
		if m.term = newTermWatch(m.o.Terminal); m.term == nil {
			m.o.Terminal = nil
			return
		}
	}
	var fd uint64
	write := true
	switch si.Val {
	case sysWrite, sysPwrite64, sysWritev, sysPwritev, sysPwritev2, sysSendfile:
		fd = si.Args[0]
	case sysSplice, sysCopyFileRange:
		fd = si.Args[2]
	case sysRead, sysPread64, sysReadv, sysPreadv, sysPreadv2:
		fd, write = si.Args[0], false
	default:
		return
	}
	if !m.term.isTerm(t, fd) {
		return
	}
	lineDone := true
	if write {
		lineDone = m.term.endsLine(t, si)
	}
	t.onTerm = true
	m.o.Terminal.Enter(lineDone)
}

// endsLine reports whether the bytes a write at its entry stop is about to
// print end with a newline, or cannot be seen: the last byte of the buffer,
// or of the last non-empty iovec.
func (w *termWatch) endsLine(t *thread, si *syscallInfo) bool {
	addr, n := si.Args[1], si.Args[2]
	switch si.Val {
	case sysWrite, sysPwrite64:
	case sysWritev, sysPwritev, sysPwritev2:
		cnt := min(n, uint64(len(w.buf)/16))
		b := w.buf[:cnt*16]
		if cnt == 0 || t.mm.dead {
			return true
		}
		if _, err := t.mm.mem.ReadMemory(addr+(n-cnt)*16, b); err != nil {
			return true
		}
		addr, n = 0, 0
		for k := len(b) - 16; k >= 0 && n == 0; k -= 16 {
			addr, n = binary.LittleEndian.Uint64(b[k:]), binary.LittleEndian.Uint64(b[k+8:])
		}
	default:
		return true
	}
	if n == 0 || t.mm.dead {
		return true
	}
	last := w.buf[:1]
	if _, err := t.mm.mem.ReadMemory(addr+n-1, last); err != nil {
		return true
	}
	return last[0] == '\n'
}

// termExit calls Terminal.Leave at the exit of a call that Enter was called
// for, and drops what is known of t's descriptors after a call that changed
// them (nr).
//
// Preconditions: on the tracer thread; t is in a syscall-exit-stop of nr.
func (m *mon) termExit(t *thread, nr uint64) {
	if t.onTerm {
		t.onTerm = false
		m.o.Terminal.Leave()
	}
	if m.term == nil {
		return
	}
	switch nr {
	case sysClose, sysDup2, sysDup3, sysCloseRange, sysExecve, sysExecveat:
		delete(m.term.known, t.tgid)
	}
}

// termGone is termExit for a thread that ends, or is let go, inside a call
// on the terminal, and forgets a process whose leader ends: its PID may be
// reused.
//
// Preconditions: on the tracer thread.
func (m *mon) termGone(t *thread) {
	if t.onTerm {
		t.onTerm = false
		m.o.Terminal.Leave()
	}
	if m.term != nil && t.tid == t.tgid {
		delete(m.term.known, t.tgid)
	}
}
