//go:build linux && amd64

package monitor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// What a program does that limits what patchprof may do in it, found
// before patchprof does it: never harm.
//
// A seccomp filter (seccomp(2)) may refuse any system call, by killing the
// process (SECCOMP_RET_KILL_PROCESS), by an error, or by a signal, and
// strict mode refuses all but read, write, _exit and sigreturn. The filter
// runs after the tracer's syscall-entry-stop, so patchprof cannot see what
// it would say of a call without making it. A process (any of whose
// threads) runs under a filter of its own, or in strict mode, has no
// system call injected at all: no scratch region, no trampolines, no
// counter memory, no rt_sigaction. Its sites are served by breakpoints
// alone (the classic cycle, which needs no scratch region), and one note
// says why. The filters patchprof itself runs under (a container's) are
// inherited by every program it starts: a target whose filters are no more
// than patchprof's own (the same count, Seccomp_filters) is taken to be
// under those, which let patchprof's own mmap, munmap, memfd_create,
// close and rt_sigaction through. A filter the program installs later is
// seen at its system call's entry (seccomp, or prctl(PR_SET_SECCOMP)):
// from then on nothing more is injected in its process; what is mapped
// stays, and runs without a system call.
//
// The in-process engine's counters are addressed through the GS base
// (counters_linux_amd64.go), which a program may use itself: through
// arch_prctl(ARCH_SET_GS), a system call patchprof sees at its entry, or
// wrgsbase, an instruction, where the kernel enabled FSGSBASE (Linux 5.9,
// AT_HWCAP2 bit HWCAP2_FSGSBASE). A process whose thread has a GS base of
// its own when its counters would be made, or whose executable code holds
// the wrgsbase encoding, never counts in-process; one that sets it later
// goes back to breakpoints before the call returns (gsFallBack), its
// counts so far kept. The xol engine then keeps the counts exact.

// A guard is what patchprof knows of a space's sandbox and GS use.
type guard struct {
	// read: the threads' seccomp state was read (sandboxed).
	read bool
	// closed says why no system call may be injected; "" if one may.
	closed string
	// scanned names the executable mappings searched for wrgsbase
	// ("lo-hi"), once the process can execute it (fsgsbase).
	scanned map[string]bool
	// fsgsbase: 0 not read yet, 1 the kernel lets the process use
	// wrgsbase, -1 it does not.
	fsgsbase int8
}

// errSandboxed is the error of a system call not injected (see above).
var errSandboxed = errors.New("not run: the process runs under seccomp, which could refuse it")

// note records a note of the run, once.
func (m *mon) note(s string) {
	if !slices.Contains(m.res.Notes, s) {
		m.res.Notes = append(m.res.Notes, s)
	}
}

// mayInject reports whether a system call may be run in mm's threads
// (syscallIn). It reads the threads' seccomp state the first time.
//
// Preconditions: on the tracer thread.
func (m *mon) mayInject(mm *space) bool {
	if !mm.guard.read {
		mm.guard.read = true
		ours := 0
		if m.filtered {
			ours = 1 // sysfilter_linux_amd64.go
		}
		if why := sandboxed(mm, ours); why != "" {
			m.closeSandbox(mm, why)
		}
	}
	return mm.guard.closed == ""
}

// closeSandbox records that no system call may be injected in mm any more.
func (m *mon) closeSandbox(mm *space, why string) {
	mm.guard.read = true
	if mm.guard.closed != "" {
		return
	}
	mm.guard.closed = why
	if mm.ctr == nil {
		mm.noJump = true
	}
	m.note(fmt.Sprintf("the program runs under %s: patchprof injects no system call into it from then on (the sandbox could refuse one, or kill the program), so the sites that would need one (for a scratch region, trampolines, counter memory) are counted by breakpoints", why))
}

// sandboxed returns what keeps system calls from being injected in mm's
// threads, or "". ours is how many filters of the monitor's own the
// threads run under, beside those patchprof itself runs under.
func sandboxed(mm *space, ours int) string {
	_, ownFilters, _ := seccompOf("/proc/self/status")
	for _, t := range mm.threads {
		mode, filters, err := seccompOf("/proc/" + strconv.Itoa(t.tgid) + "/task/" + strconv.Itoa(t.tid) + "/status")
		if err != nil {
			continue // gone
		}
		switch {
		case mode == 1:
			return "seccomp strict mode"
		case mode == 2 && (filters < 0 || filters > ownFilters+ours):
			return "a seccomp filter"
		}
	}
	return ""
}

// seccompOf reads a thread's seccomp mode (0 none, 1 strict, 2 filter) and
// its filter count (-1 when the kernel does not say: before Linux 5.9) from
// its /proc status file (proc(5)).
func seccompOf(path string) (mode, filters int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	filters = -1
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "Seccomp":
			mode, _ = strconv.Atoi(strings.TrimSpace(v))
		case "Seccomp_filters":
			filters, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if mode == 0 {
		filters = 0
	}
	return mode, filters, nil
}

// System calls and their arguments that change a thread's sandbox or GS
// base (asm/unistd_64.h, linux/prctl.h, asm/prctl.h, linux/mman.h).
const (
	sysMprotect  = 10
	sysPrctl     = 157
	sysArchPrctl = 158
	sysSeccomp   = 317
	prSetSeccomp = 22
	// seccomp(2)'s operation and prctl(2)'s mode for strict mode.
	seccompSetModeStrict = 0
	seccompModeStrict    = 1
	archSetGS            = 0x1001
	protExec             = 4
	atHwcap2             = 26
	hwcap2FSGSBase       = 1 << 1
)

// guardEntry looks at a system call t is entering: one that installs a
// seccomp filter closes its process to injected calls before it runs;
// arch_prctl(ARCH_SET_GS) sends its process's sites back to breakpoints
// before the thread's GS base is the program's.
//
// Preconditions: on the tracer thread; t is in a syscall-entry-stop.
func (m *mon) guardEntry(t *thread, nr uint64, args [6]uint64) {
	switch {
	case nr == sysSeccomp && args[0] == seccompSetModeStrict,
		nr == sysPrctl && args[0] == prSetSeccomp && args[1] == seccompModeStrict:
		m.closeSandbox(t.mm, "seccomp strict mode")
	case nr == sysSeccomp, nr == sysPrctl && args[0] == prSetSeccomp:
		m.closeSandbox(t.mm, "a seccomp filter")
	case nr == sysArchPrctl && args[0] == archSetGS:
		m.gsFallBack(t, "arch_prctl(ARCH_SET_GS)")
	}
}

// guardExit looks at a system call t made: executable code newly mapped
// is searched for wrgsbase while the process counts in-process, where the
// kernel lets it run wrgsbase. The call's arguments are still in their
// registers (the syscall instruction changes only rax, rcx and r11).
//
// Preconditions: on the tracer thread; t is in a syscall-exit-stop.
func (m *mon) guardExit(t *thread, nr, ret uint64) {
	mm := t.mm
	if mm.ctr == nil || mm.noJump || mm.guard.fsgsbase <= 0 || int64(ret) < 0 || nr != sysMmap && nr != sysMprotect {
		return
	}
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil || regs.Rdx&protExec == 0 {
		return
	}
	lo := regs.Rdi
	if nr == sysMmap {
		lo = ret
	}
	m.scanGS(t, lo, regs.Rsi)
}

// gsFree reports whether the in-process counters may use the GS base of
// mm's threads: none has a GS base of its own, and no executable code of
// the process holds wrgsbase (where the kernel lets it run). When one
// does, the space is off the engine and a note says why.
//
// Preconditions: on the tracer thread; mm's threads are stopped.
func (m *mon) gsFree(mm *space) bool {
	if mm.noJump {
		return false
	}
	for _, u := range mm.threads {
		if u.state != stopped || u.fresh {
			continue
		}
		gs, err := peekUser(u.tid, offGsBase)
		if err != nil {
			continue
		}
		if gs != 0 && (mm.ctr == nil || gs < mm.ctr.base || gs >= mm.ctr.base+mm.ctr.size()) {
			m.gsOff(mm, "set before its counters were")
			return false
		}
	}
	var t *thread
	for _, u := range mm.threads {
		t = u
	}
	if t == nil {
		return true
	}
	m.scanGS(t, 0, 0)
	return !mm.noJump
}

// gsOff takes mm off the in-process engine before it counts in-process.
func (m *mon) gsOff(mm *space, why string) {
	mm.noJump = true
	m.note(gsNote(why))
}

func gsNote(why string) string {
	return fmt.Sprintf("the program uses its own GS base (%s), through which the in-process engine addresses its counters: its sites are counted by breakpoints from then on", why)
}

// gsFallBack sends mm's sites back to breakpoints because t is about to
// change its GS base: every patched site becomes an int3 again (unjump),
// with the other threads stopped, and its counts so far are kept (fold
// reads the slabs of the sites put back). A thread that was in a
// trampoline goes on through it with the GS base it has, a slab.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) gsFallBack(t *thread, why string) {
	mm := t.mm
	if mm.noJump && mm.ctr == nil {
		m.note(gsNote(why))
		return
	}
	if mm.noJump {
		return
	}
	mm.noJump = true
	m.note(gsNote(why))
	if mm.ctr == nil {
		return
	}
	held := m.cur == mm
	if !held {
		m.stopOthers(mm, t)
	}
	m.unjump(mm)
	if !held {
		m.resumeOthers(mm, t)
	}
}

// scanGS searches the executable code of t's process for the wrgsbase
// instruction, where the kernel lets the process run it: [lo, lo+n), or
// every executable mapping not searched yet when n is 0. Found, the
// process goes back to breakpoints (gsFallBack).
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) scanGS(t *thread, lo, n uint64) {
	mm := t.mm
	if mm.guard.fsgsbase == 0 {
		mm.guard.fsgsbase = -1
		if hwcap2(t.tgid)&hwcap2FSGSBase != 0 {
			mm.guard.fsgsbase = 1
		}
	}
	if mm.guard.fsgsbase < 0 {
		return
	}
	var ranges [][2]uint64
	if n != 0 {
		ranges = append(ranges, [2]uint64{lo, lo + n})
	} else {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(t.tgid) + "/maps")
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || !strings.Contains(f[1], "x") {
				continue
			}
			l, h, ok := mapRange(f[0])
			if !ok || mm.guard.scanned[f[0]] || ourRegion(mm, l) {
				continue
			}
			if mm.guard.scanned == nil {
				mm.guard.scanned = map[string]bool{}
			}
			mm.guard.scanned[f[0]] = true
			ranges = append(ranges, [2]uint64{l, h})
		}
	}
	buf := make([]byte, 1<<20)
	for _, r := range ranges {
		for a := r[0]; a < r[1]; {
			k := min(uint64(len(buf)), r[1]-a)
			got, _ := mm.mem.ReadMemory(a, buf[:k])
			if got <= 0 {
				break
			}
			if hasWrgsbase(buf[:got]) {
				m.gsFallBack(t, fmt.Sprintf("its code at %#x-%#x holds wrgsbase", r[0], r[1]))
				return
			}
			// Overlap by 4 bytes: an instruction across two reads.
			if uint64(got) <= 4 || a+uint64(got) >= r[1] {
				break
			}
			a += uint64(got) - 4
		}
	}
}

// ourRegion reports whether addr is in a scratch region or trampolines of
// patchprof's in mm.
func ourRegion(mm *space, addr uint64) bool {
	for _, mp := range mm.maps {
		if mp.jmp != nil && addr >= mp.jmp.base && addr < mp.jmp.base+mp.jmp.size {
			return true
		}
		if mp.xol != nil && mp.xol.contains(addr) {
			return true
		}
	}
	return false
}

// hasWrgsbase reports whether code may hold a wrgsbase instruction: F3,
// an optional REX prefix, 0F AE, and a ModRM byte with mod 11 and reg 3
// (Intel SDM vol. 2, WRFSBASE/WRGSBASE). The bytes are not decoded: a
// match inside another instruction only costs the in-process engine.
func hasWrgsbase(code []byte) bool {
	for k := 0; ; {
		i := bytes.Index(code[k:], []byte{0x0f, 0xae})
		if i < 0 {
			return false
		}
		i += k
		if i+2 < len(code) && code[i+2]&0xf8 == 0xd8 {
			if i >= 1 && code[i-1] == 0xf3 {
				return true
			}
			if i >= 2 && code[i-1]&0xf0 == 0x40 && code[i-2] == 0xf3 {
				return true
			}
		}
		k = i + 1
	}
}

// hwcap2 returns process pid's AT_HWCAP2 (getauxval(3)), 0 if unknown.
func hwcap2(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/auxv")
	if err != nil {
		return 0
	}
	for k := 0; k+16 <= len(b); k += 16 {
		if binary.LittleEndian.Uint64(b[k:]) == atHwcap2 {
			return binary.LittleEndian.Uint64(b[k+8:])
		}
	}
	return 0
}

// restoreGS puts back the GS base of every stopped thread of mm that points
// into its counter memory: 0, as it was when it was given a slab (giveSlab
// gives none to a thread with a GS base of its own). A thread whose GS
// base is the program's own is left alone.
//
// Preconditions: on the tracer thread.
func (m *mon) restoreGS(mm *space) {
	c := mm.ctr
	for _, u := range mm.threads {
		if u.state != stopped {
			continue
		}
		gs, err := peekUser(u.tid, offGsBase)
		if err == nil && c != nil && (gs < c.base || gs >= c.base+c.size()) {
			u.dropSlab()
			continue
		}
		if err == nil {
			err = pokeUser(u.tid, offGsBase, 0)
		}
		if err != nil {
			m.leaveChanged(fmt.Errorf("restore the GS base of thread %d: %w", u.tid, err))
		}
		u.dropSlab()
	}
}

// notInjected reports whether err is a system call patchprof did not run
// (errSandboxed): not a failure, the note says why.
func notInjected(err error) bool { return errors.Is(err, errSandboxed) }
