//go:build linux && amd64

package monitor

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// The dynamic linker's mapping window. glibc's ld.so calls _dl_debug_state
// (a Notify site) with r_debug.r_state RT_ADD before it maps the objects a
// program needs or dlopen asks for, and with RT_CONSISTENT once they are
// mapped, before any of their code runs (relocation, IFUNC resolvers and
// constructors come after). In between it opens, reads, maps and protects
// files: two dozen system calls for a program that needs only the C library,
// each two stops under PTRACE_SYSCALL (1.3 ms unpinned on the development
// VM), and none that touches the signal state the system-call stops follow
// (sigstate_linux_amd64.go). So a thread resumed from an RT_ADD notification
// runs to its next stop without system-call stops. Any stop ends that: the
// RT_CONSISTENT notification, a signal (whose handler is the program's
// code), an interrupt of ours. An LD_AUDIT library's callbacks run inside
// the window, so a program started with one keeps every stop.

const (
	rtAdd     = 1  // RT_ADD, <link.h>
	rStateOff = 24 // r_state in struct r_debug on x86-64: int, pointer, address, then it
)

// loaderWindow sets t.loading when the notification t has just run, in
// mapping mp, begins a load. One that ends a load has the objects mapped
// in the window, whose mmaps guardExit did not see, searched for wrgsbase
// before any of their code runs (guard_linux_amd64.go).
//
// Preconditions: on the tracer thread; t is stopped past the site.
func (m *mon) loaderWindow(t *thread, mp *mapping) {
	if mp.Image.RDebug == 0 || audited(t.mm) {
		return
	}
	var b [4]byte
	if _, err := t.mm.mem.ReadMemory(mp.Bias+mp.Image.RDebug+rStateOff, b[:]); err != nil {
		return
	}
	t.loading = binary.LittleEndian.Uint32(b[:]) == rtAdd
	if !t.loading && t.mm.ctr != nil && !t.mm.noJump {
		m.scanGS(t, 0, 0)
	}
}

// audited reports whether mm's program may run an LD_AUDIT library (or its
// environment cannot be read).
func audited(mm *space) bool {
	if mm.audit == 0 {
		mm.audit = -1
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", mm.tgid))
		if err != nil || hasAudit(env) {
			mm.audit = 1
		}
	}
	return mm.audit > 0
}

// hasAudit reports whether an environment block (NUL-separated) sets
// LD_AUDIT to something.
func hasAudit(env []byte) bool {
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("LD_AUDIT=")); ok && len(v) > 0 {
			return true
		}
	}
	return false
}
