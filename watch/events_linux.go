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

// procEvents is a socket of the process events connector, read through
// the runtime's poller so that Close ends a Wait.
type procEvents struct{ f *os.File }

// openProcEvents joins the process events connector; the error says why
// it cannot (no CAP_NET_ADMIN, a kernel without CONFIG_PROC_EVENTS).
func openProcEvents() (*procEvents, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_CONNECTOR)
	if err != nil {
		return nil, fmt.Errorf("netlink connector socket: %w", err)
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
// or exec on the host, and returns their PIDs; ok is false once the
// socket is closed. lost is set on a receive buffer overrun (ENOBUFS:
// events dropped on a busy host): the caller must look at everything.
func (e *procEvents) Wait() (pids []int, lost, ok bool) {
	buf := make([]byte, 8192)
	for {
		n, err := e.f.Read(buf)
		switch {
		case errors.Is(err, unix.ENOBUFS):
			return nil, true, true
		case err != nil:
			return nil, false, false
		}
		if pids = newProcs(buf[:n]); len(pids) > 0 {
			return pids, false, true
		}
	}
}

// newProcs returns the processes a received datagram says were made or
// exec'ed: struct proc_event's what, then for a fork parent_pid,
// parent_tgid, child_pid, child_tgid (a thread's has child_pid !=
// child_tgid), for an exec process_pid, process_tgid; after the netlink
// and connector headers and the event's cpu and timestamp.
func newProcs(b []byte) []int {
	le := binary.LittleEndian
	var pids []int
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
					pids = append(pids, int(tgid))
				}
			case procEventExec:
				pids = append(pids, int(le.Uint32(ev[20:])))
			}
		}
		if l = (l + 3) &^ 3; l >= len(b) {
			break
		}
		b = b[l:]
	}
	return pids
}

// Close leaves the connector, ending a Wait.
func (e *procEvents) Close() error {
	return e.f.Close()
}
