//go:build linux

package monitor

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// procMem is a breakpoint.Memory over /proc/PID/mem. Unlike process_vm_writev it
// can write to the read-only, private code pages of a traced process (the kernel
// breaks copy-on-write as for PTRACE_POKETEXT), and one pread or pwrite moves a
// whole page.
type procMem struct {
	fd  int
	pid int
	st  *stage // writes held back (stage_linux.go), or nil
}

func openMem(pid int) (*procMem, error) {
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/mem", pid), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /proc/%d/mem: %w", pid, err)
	}
	return &procMem{fd: fd, pid: pid}, nil
}

// ReadMemory reads len(buf) bytes at addr.
func (m *procMem) ReadMemory(addr uint64, buf []byte) (int, error) {
	if m.st != nil {
		if n, ok := m.stagedRead(addr, buf); ok {
			return n, nil
		}
		if err := m.flush(); err != nil {
			return 0, err
		}
	}
	return unix.Pread(m.fd, buf, int64(addr))
}

// WriteMemory writes buf at addr.
func (m *procMem) WriteMemory(addr uint64, buf []byte) (int, error) {
	if m.st != nil {
		if n, ok := m.stagedWrite(addr, buf); ok {
			return n, nil
		}
		if err := m.flush(); err != nil {
			return 0, err
		}
	}
	return unix.Pwrite(m.fd, buf, int64(addr))
}

func (m *procMem) Close() error {
	if m == nil || m.fd < 0 {
		return nil
	}
	err := unix.Close(m.fd)
	m.fd = -1
	return err
}
