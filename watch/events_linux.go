package watch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The kernel's process events connector (drivers/connector/cn_proc.c,
// include/uapi/linux/cn_proc.h): a netlink socket of the connector family
// joined to the CN_IDX_PROC group, after a PROC_CN_MCAST_LISTEN message,
// receives one message per fork, exec and exit on the host. Joining needs
// CAP_NET_ADMIN (in the initial user namespace).
const (
	cnIdxProc         = 1 // CN_IDX_PROC, and CN_VAL_PROC
	procCnMcastListen = 1 // enum proc_cn_mcast_op
	procEventFork     = 0x00000001
	procEventExec     = 0x00000002
	nlmsgHdrLen       = 16 // struct nlmsghdr
	cnMsgLen          = 20 // struct cn_msg: id (idx, val), seq, ack, len (u16), flags (u16)
)

// The offsets in a message of the process events connector (after the
// netlink and connector headers) of struct proc_event's what, and of a
// fork's child_pid and child_tgid.
const (
	evWhatOff     = nlmsgHdrLen + cnMsgLen
	evChildPIDOff = evWhatOff + 24
	evChildTIDOff = evWhatOff + 28
)

// eventFilter is a classic BPF socket filter that keeps the forks of
// processes (a fork whose child_pid is its child_tgid: not a thread's)
// and, if execs, the execs, and drops the rest in the kernel: the
// creation and exit of every thread of the host, which would otherwise
// each wake the watch to be thrown away (a Go or Java program makes
// threads by the hundred). A load of a word is in network byte order
// (big-endian), so a constant compared with the kernel's little-endian
// what is byte-swapped; two loaded words compare equal either way.
func eventFilter(execs bool) []unix.SockFilter {
	const (
		ldw    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeqK   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jeqX   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_X
		tax    = unix.BPF_MISC | unix.BPF_TAX
		ret    = unix.BPF_RET | unix.BPF_K
		keep   = 0xffff // bytes of the message kept: all of it
		forkBE = procEventFork << 24
		execBE = procEventExec << 24
	)
	execJump := uint8(0) // to the fork test: the exec test never jumps
	if execs {
		execJump = 5 // to keep
	}
	return []unix.SockFilter{
		{Code: ldw, K: evWhatOff},
		{Code: jeqK, Jt: execJump, K: execBE},
		{Code: jeqK, Jf: 5, K: forkBE}, // else to drop
		{Code: ldw, K: evChildTIDOff},
		{Code: tax},
		{Code: ldw, K: evChildPIDOff},
		{Code: jeqX, Jf: 1},  // a thread's: to drop
		{Code: ret, K: keep}, // keep
		{Code: ret, K: 0},    // drop
	}
}

// procEvents is a socket of the process events connector, read through
// the runtime's poller so that Close ends a Wait.
type procEvents struct{ f *os.File }

// openProcEvents joins the process events connector, receiving the forks
// of processes and, if execs, the execs; the error says why it cannot (no
// CAP_NET_ADMIN, a kernel without CONFIG_PROC_EVENTS).
func openProcEvents(execs bool) (*procEvents, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_CONNECTOR)
	if err != nil {
		return nil, fmt.Errorf("netlink connector socket: %w", err)
	}
	prog := eventFilter(execs)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("filter the process events: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: cnIdxProc}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("join the process events group: %w", err)
	}
	msg := make([]byte, nlmsgHdrLen+cnMsgLen+4)
	le := binary.LittleEndian // x86-64: the kernel's own order
	le.PutUint32(msg[0:], uint32(len(msg)))
	le.PutUint16(msg[4:], unix.NLMSG_DONE)
	le.PutUint32(msg[12:], uint32(os.Getpid()))
	c := msg[nlmsgHdrLen:]
	le.PutUint32(c[0:], cnIdxProc)
	le.PutUint32(c[4:], cnIdxProc)
	le.PutUint16(c[16:], 4)
	le.PutUint32(c[cnMsgLen:], procCnMcastListen)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("ask for process events: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink connector socket: %w", err)
	}
	return &procEvents{f: os.NewFile(uintptr(fd), "process events")}, nil
}

// Wait blocks until processes are made (a fork that is not a thread's)
// or exec on the host, and returns them in the kernel's order; ok is
// false once the socket is closed. lost is set on a receive buffer
// overrun (ENOBUFS: events dropped on a busy host): the caller must look
// at everything.
func (e *procEvents) Wait() (evs []procEvent, lost, ok bool) {
	buf := make([]byte, 8192)
	for {
		n, err := e.f.Read(buf)
		switch {
		case errors.Is(err, unix.ENOBUFS):
			return nil, true, true
		case err != nil:
			return nil, false, false
		}
		if evs = newProcs(buf[:n]); len(evs) > 0 {
			return evs, false, true
		}
	}
}

// newProcs returns the processes a received datagram says were made or
// exec'ed: struct proc_event's what, then for a fork parent_pid,
// parent_tgid, child_pid, child_tgid (a thread's has child_pid !=
// child_tgid), for an exec process_pid, process_tgid; after the netlink
// and connector headers and the event's cpu and timestamp.
func newProcs(b []byte) []procEvent {
	le := binary.LittleEndian
	var evs []procEvent
	for len(b) >= nlmsgHdrLen {
		l := int(le.Uint32(b))
		if l < nlmsgHdrLen || l > len(b) {
			break
		}
		ev := b[nlmsgHdrLen:l]
		if len(ev) >= cnMsgLen+32 {
			ev = ev[cnMsgLen:]
			switch le.Uint32(ev) {
			case procEventFork:
				if pid, tgid := le.Uint32(ev[24:]), le.Uint32(ev[28:]); pid == tgid {
					evs = append(evs, procEvent{PID: int(tgid), Parent: int(le.Uint32(ev[20:])), Fork: true})
				}
			case procEventExec:
				evs = append(evs, procEvent{PID: int(le.Uint32(ev[20:]))})
			}
		}
		if l = (l + 3) &^ 3; l >= len(b) {
			break
		}
		b = b[l:]
	}
	return evs
}

// Close leaves the connector, ending a Wait.
func (e *procEvents) Close() error {
	return e.f.Close()
}
