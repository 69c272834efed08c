//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// The system calls a launched target stops at.
//
// The monitor follows a few of the target's system calls: those that change
// its SIGTRAP disposition or mask (sigstate_linux_amd64.go), that move,
// unmap or unprotect its code (textchange_linux_amd64.go), that install a
// sandbox or a GS base of its own or map code (guard_linux_amd64.go), and,
// when patchprof draws on a terminal, those on that terminal
// (term_linux_amd64.go). Under PTRACE_SYSCALL every other call costs two
// stops as well: 100,000 write(2)s to /dev/null took 13 s instead of
// 0.13 s. So a launched target gets, at its first stop, before any of its
// code ran, a seccomp filter (seccomp(2), SECCOMP_SET_MODE_FILTER) that
// returns SECCOMP_RET_TRACE for exactly those calls and SECCOMP_RET_ALLOW
// for the rest; with PTRACE_O_TRACESECCOMP the kernel stops the thread
// (PTRACE_EVENT_SECCOMP) before such a call runs, where the monitor does
// what it did at the syscall-entry-stop, and resumes the thread with
// PTRACE_SYSCALL to see the call's exit; every other call runs at full
// speed, the threads being resumed with PTRACE_CONT.
//
// A filter cannot be removed, and with no tracer (or one without
// PTRACE_O_TRACESECCOMP) SECCOMP_RET_TRACE makes the call fail with ENOSYS
// (kernel/seccomp.c, __seccomp_filter). So it is installed only where
// patchprof stays the tracer of every process that inherits it, for its
// whole life: a launched target (PTRACE_O_EXITKILL kills it with
// patchprof), never with --no-follow (a forked child runs untraced) nor
// with Options.Stop (a detach), nor at an attach (-p), which keeps
// PTRACE_SYSCALL.
//
// What the program can tell:
//   - its own filters stack over ours, and the kernel takes the strictest
//     answer; a SECCOMP_RET_TRACE of its own (whose data is not ours) is
//     answered as without a tracer: the call fails with ENOSYS;
//   - strict mode cannot be entered over a filter (EINVAL), so a request
//     for it when the program has no filter of its own is emulated: the
//     call succeeds, and the thread stops at every system call from then
//     on; any but read, write, exit and rt_sigreturn kills it
//     (strictRefuses); prctl(PR_GET_SECCOMP) answers 0 where it would
//     natively;
//   - /proc/PID/status shows one more filter (Seccomp, Seccomp_filters)
//     and, for a program patchprof cannot install a filter in otherwise,
//     NoNewPrivs: a non-root target needs no_new_privs for the filter,
//     which changes nothing under an unprivileged tracer (the kernel
//     already gives an exec'd set-user-ID program no privileges under
//     ptrace); when patchprof is root and the target cannot take the
//     filter without it, the threads keep PTRACE_SYSCALL instead;
//   - a write to the terminal through a descriptor opened on it later
//     (open of /dev/tty) is not seen, and may mix with patchprof's
//     progress line. A duplicate of a descriptor on the terminal (dup,
//     dup2, dup3, fcntl F_DUPFD) is seen at the exit of its call: its
//     process then stops at every call, as without the filter, until an
//     exec leaves it only descriptors the filter knows (termDup).
//
// The temporary masks of ppoll, pselect6, epoll_pwait and the like are
// not followed through the filter: the mask is the program's again when
// such a call returns, and a handler run from inside one is seen at its
// delivery, where the mask is read.
//
// PATCHPROF_SYSCALL_STOPS=all keeps PTRACE_SYSCALL for every target, as
// before the filter (a fallback, and the baseline of the bench).

// sigSetmask is rt_sigprocmask's SIG_SETMASK (asm-generic/signal-defs.h).
const sigSetmask = 2

// filterData is the SECCOMP_RET_DATA of the monitor's filter: a
// PTRACE_EVENT_SECCOMP stop with other data is the program's own filter's.
const filterData = 0x5050

// seccomp(2) and BPF constants (linux/seccomp.h, linux/filter.h,
// linux/audit.h).
const (
	seccompRetTrace      = 0x7ff00000
	seccompRetAllow      = 0x7fff0000
	seccompSetModeFilter = 1
	auditArchX86_64      = 0xc000003e
	x32SyscallBit        = 0x40000000
	prSetNoNewPrivs      = 38
	prGetSeccomp         = 21
	sysExit              = 60
	sysDup               = 32
	sysFcntl             = 72
	fDupfd               = 0
	fDupfdCloexec        = 1030

	bpfLdAbsW = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK   = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK   = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJsetK  = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfJa     = 0x05 // BPF_JMP | BPF_JA
	bpfRetK   = 0x06 // BPF_RET | BPF_K

	// Offsets in struct seccomp_data: nr, arch, then the arguments' low
	// words (little-endian), from 16 by 8.
	seccompNr   = 0
	seccompArch = 4
)

// A filterRule traces system call nr, or only when the low word of its
// argument arg is one of vals, or has a bit of mask set, or (nonNull)
// when the whole argument is not 0.
type filterRule struct {
	nr      uint32
	arg     int // -1: every call
	vals    []uint32
	mask    uint32
	nonNull bool
}

// filterRules returns what the monitor's filter traces; ttyFds are the
// target's descriptors on patchprof's terminal (none: no terminal to
// watch).
func filterRules(ttyFds []uint32) []filterRule {
	all := func(nrs ...uint32) []filterRule {
		var r []filterRule
		for _, nr := range nrs {
			r = append(r, filterRule{nr: nr, arg: -1})
		}
		return r
	}
	r := all(sysRtSigreturn, sysRtSigsuspend, sysSeccomp, sysMunmap, sysMremap, sysMprotect, sysPkeyMprotect)
	r = append(r,
		// A query (no new action, no new set) changes nothing the
		// monitor keeps: a Go program's start makes about 60 of each.
		filterRule{nr: sysRtSigaction, arg: 1, nonNull: true},
		filterRule{nr: sysRtSigprocmask, arg: 1, nonNull: true},
		filterRule{nr: sysPrctl, arg: 0, vals: []uint32{prSetSeccomp, prGetSeccomp}},
		filterRule{nr: sysArchPrctl, arg: 0, vals: []uint32{archSetGS}},
		filterRule{nr: sysMadvise, arg: 2, vals: []uint32{madvDontneed, madvDontneedLocked}},
		filterRule{nr: sysMmap, arg: 2, mask: protExec},
	)
	if len(ttyFds) == 0 {
		return r
	}
	r = append(r, all(sysDup, sysDup2, sysDup3, sysCloseRange, sysExecve, sysExecveat)...)
	r = append(r, filterRule{nr: sysFcntl, arg: 1, vals: []uint32{fDupfd, fDupfdCloexec}})
	for _, nr := range []uint32{sysRead, sysWrite, sysClose, sysPread64, sysPwrite64, sysReadv, sysWritev,
		sysSendfile, sysPreadv, sysPwritev, sysPreadv2, sysPwritev2} {
		r = append(r, filterRule{nr: nr, arg: 0, vals: ttyFds})
	}
	for _, nr := range []uint32{sysSplice, sysCopyFileRange} {
		r = append(r, filterRule{nr: nr, arg: 2, vals: ttyFds})
	}
	return r
}

// A bpfInsn is a struct sock_filter whose jumps are absolute instruction
// indices until encode makes them relative.
type bpfInsn struct {
	code   uint16
	jt, jf int
	k      uint32
}

// Jump targets resolved by encode.
const (
	toTrace = -1
	toAllow = -2
)

// buildFilter assembles the classic BPF program of the rules: a call of
// another architecture (int 0x80) or of the x32 ABI is traced whole, as
// under PTRACE_SYSCALL; of the others, those the rules name.
func buildFilter(rules []filterRule) []byte {
	var p []bpfInsn
	next := func() int { return len(p) + 1 }
	p = append(p, bpfInsn{code: bpfLdAbsW, k: seccompArch})
	p = append(p, bpfInsn{code: bpfJeqK, k: auditArchX86_64, jt: next(), jf: toTrace})
	p = append(p, bpfInsn{code: bpfLdAbsW, k: seccompNr})
	p = append(p, bpfInsn{code: bpfJgeK, k: x32SyscallBit, jt: toTrace, jf: next()})
	for _, r := range rules {
		if r.arg < 0 {
			p = append(p, bpfInsn{code: bpfJeqK, k: r.nr, jt: toTrace, jf: next()})
			continue
		}
		// nr matched and the argument did not: allowed, since no other
		// rule names the same call.
		at := len(p)
		p = append(p, bpfInsn{code: bpfJeqK, k: r.nr})
		p = append(p, bpfInsn{code: bpfLdAbsW, k: uint32(16 + 8*r.arg)})
		for _, v := range r.vals {
			p = append(p, bpfInsn{code: bpfJeqK, k: v, jt: toTrace, jf: next()})
		}
		if r.mask != 0 {
			p = append(p, bpfInsn{code: bpfJsetK, k: r.mask, jt: toTrace, jf: next()})
		}
		if r.nonNull {
			p = append(p, bpfInsn{code: bpfJsetK, k: 0xffffffff, jt: toTrace, jf: next()})
			p = append(p, bpfInsn{code: bpfLdAbsW, k: uint32(16 + 8*r.arg + 4)}) // the high word
			p = append(p, bpfInsn{code: bpfJsetK, k: 0xffffffff, jt: toTrace, jf: next()})
		}
		p = append(p, bpfInsn{code: bpfJa, jt: toAllow})
		p[at].jt, p[at].jf = at+1, len(p)
	}
	p = append(p, bpfInsn{code: bpfJa, jt: toAllow})
	trace, allow := len(p), len(p)+1
	p = append(p, bpfInsn{code: bpfRetK, k: seccompRetTrace | filterData})
	p = append(p, bpfInsn{code: bpfRetK, k: seccompRetAllow})
	return encodeFilter(p, trace, allow)
}

// encodeFilter writes the program as struct sock_filter words, its jumps
// relative to the next instruction.
func encodeFilter(p []bpfInsn, trace, allow int) []byte {
	abs := func(to int) int {
		switch to {
		case toTrace:
			return trace
		case toAllow:
			return allow
		}
		return to
	}
	b := make([]byte, 8*len(p))
	for i, in := range p {
		w := b[8*i:]
		binary.LittleEndian.PutUint16(w, in.code)
		k := in.k
		switch in.code {
		case bpfJa:
			k = uint32(abs(in.jt) - (i + 1))
		case bpfRetK, bpfLdAbsW:
		default:
			w[2] = byte(abs(in.jt) - (i + 1))
			w[3] = byte(abs(in.jf) - (i + 1))
		}
		binary.LittleEndian.PutUint32(w[4:], k)
	}
	return b
}

// wantFilter reports whether a run with options o may install the filter
// in its target (see the comment at the top).
func wantFilter(o *Options) bool {
	return o.Attach == 0 && o.Stop == nil && !o.NoFollow && os.Getenv("PATCHPROF_SYSCALL_STOPS") != "all"
}

// installFilter installs the monitor's filter in t, the launched target's
// only thread, at its first stop: every task it makes inherits it. On
// failure the threads keep PTRACE_SYSCALL; nothing of the program's
// changed.
//
// Preconditions: on the tracer thread; t is stopped before running any
// code of its own, can inject, and is its process's only thread.
func (m *mon) installFilter(t *thread) {
	if !m.mayInject(t.mm) {
		return
	}
	if _, ok := statusField("/proc/self/status", "Seccomp_filters"); !ok {
		// Before Linux 5.9 the filters are not counted, and a
		// program's own could not be told from the monitor's
		// (sandboxed).
		return
	}
	var fds []uint32
	if m.o.Terminal != nil && m.term == nil {
		if m.term = newTermWatch(m.o.Terminal); m.term == nil {
			m.o.Terminal = nil
		}
	}
	if m.term != nil {
		fds = m.termFds(t)
		m.ttyFds = fds
	}
	prog := buildFilter(filterRules(fds))
	err := m.runSeccomp(t, prog)
	if err == unix.EACCES && os.Geteuid() != 0 {
		// Unprivileged: no_new_privs takes nothing from the program
		// that ptrace has not already (see the comment at the top).
		at, _ := loadBias(t.tgid, 0)
		var r uint64
		if r, err = m.syscallIn(t, at, sysPrctl, prSetNoNewPrivs, 1, 0, 0, 0); err == nil && int64(r) < 0 {
			err = unix.Errno(-int64(r))
		}
		if err == nil {
			err = m.runSeccomp(t, prog)
		}
	}
	if err != nil {
		if debug {
			dbg("seccomp filter: %v\n", err)
		}
		return
	}
	m.filtered = true
}

// runSeccomp runs seccomp(SECCOMP_SET_MODE_FILTER, 0, prog) in t, with the
// program and its struct sock_fprog in the stack below the red zone.
//
// Preconditions: as installFilter.
func (m *mon) runSeccomp(t *thread, prog []byte) error {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
		return err
	}
	size := uint64(16 + len(prog))
	buf := (regs.Rsp - 128 - size) &^ 15
	saved := make([]byte, size)
	if _, err := t.mm.mem.ReadMemory(buf, saved); err != nil {
		return fmt.Errorf("read the stack at %#x: %w", buf, err)
	}
	b := make([]byte, size)
	binary.LittleEndian.PutUint16(b, uint16(len(prog)/8))
	binary.LittleEndian.PutUint64(b[8:], buf+16)
	copy(b[16:], prog)
	if _, err := t.mm.mem.WriteMemory(buf, b); err != nil {
		return fmt.Errorf("write the stack at %#x: %w", buf, err)
	}
	at := regs.Rip
	if entry, err := loadBias(t.tgid, 0); err == nil && entry != 0 {
		at = entry
	}
	r, err := m.syscallIn(t, at, sysSeccomp, seccompSetModeFilter, 0, buf)
	if err == nil && int64(r) < 0 {
		err = unix.Errno(-int64(r))
	}
	if _, werr := t.mm.mem.WriteMemory(buf, saved); werr != nil && err == nil {
		err = fmt.Errorf("restore the stack at %#x: %w", buf, werr)
	}
	return err
}

// termFds returns t's open descriptors on patchprof's terminal (at most
// 16 of them; more make the process stop at every call).
func (m *mon) termFds(t *thread) []uint32 {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(t.tid) + "/fd")
	if err != nil {
		return []uint32{0, 1, 2}
	}
	var fds []uint32
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err == nil && m.term.isTerm(t, uint64(fd)) {
			if len(fds) == 16 {
				t.allCalls = true
				break
			}
			fds = append(fds, uint32(fd))
		}
	}
	return fds
}

// seccompStop handles a PTRACE_EVENT_SECCOMP stop of t: the monitor's
// filter stops a call it follows before it runs, as its
// syscall-entry-stop would have (sysEnter; the thread is then resumed
// with PTRACE_SYSCALL, to the call's exit); a SECCOMP_RET_TRACE of the
// program's own filter fails the call with ENOSYS, as without a tracer.
//
// Preconditions: on the tracer thread; t is in a PTRACE_EVENT_SECCOMP stop.
func (m *mon) seccompStop(t *thread) {
	var si syscallInfo
	if err := getSyscallInfo(t.tid, &si); err != nil {
		m.lose(fmt.Errorf("read the system call of thread %d: %w", t.tid, err))
		return
	}
	if debug {
		dbg("seccomp tid=%d op=%d nr=%#x args=%x data=%#x\n", t.tid, si.Op, si.Val, si.Args, si.RetData)
	}
	if si.Op != unix.PTRACE_SYSCALL_INFO_SECCOMP {
		return
	}
	if si.RetData != filterData {
		m.skipCall(t, -int64(unix.ENOSYS))
		return
	}
	if !t.sysEntry || t.sysNr != si.Val {
		// Unless its syscall-entry-stop came first (PTRACE_SYSCALL).
		si.Op = unix.PTRACE_SYSCALL_INFO_ENTRY
		m.sysEnter(t, &si)
	}
	if strictRequest(si.Val, si.Args) {
		m.strictEntry(t, si.Val, si.Args)
	}
	t.idleExit = m.exitIdle(t, si.Val, si.Args)
}

// exitIdle reports whether the exit of t's call nr with args, stopped at
// by the filter and seen at its entry (sysEnter), leaves the monitor
// nothing to do: a call that maps, unmaps, moves, protects or drops
// memory holding none of the profiled code (textEntry found none), where
// no mapping of code is searched for wrgsbase (guardExit); a new action
// or mask known to be the one the call sets. The thread is then resumed past it without the
// system-call stops, as after a call the filter lets run: one stop
// instead of two (the dynamic linker's mprotect of each library's RELRO
// pages, a Go runtime's madvise of its heap and its signal set-up).
// Every other call keeps its exit.
func (m *mon) exitIdle(t *thread, nr uint64, args [6]uint64) bool {
	if !m.filtered || t.strict || t.allCalls || t.kicked || t.onTerm || t.textCall != nil || !t.sysEntry {
		return false
	}
	mm := t.mm
	searched := mm.ctr != nil && !mm.noJump && mm.guard.fsgsbase > 0
	switch nr {
	case sysRtSigaction:
		// (A query never stops here: the filter lets it run.) A new
		// action read at the entry (sysEnter) is the one the call sets
		// whenever it succeeds, and it fails then only for a signal that
		// cannot be caught or a sigset size other than 8
		// (kernel/signal.c): it is recorded as the thread resumes
		// (resume). A Go hello world's start makes dozens of these.
		sig := args[0]
		return t.pendSig != 0 && sig != uint64(unix.SIGKILL) && sig != uint64(unix.SIGSTOP) && args[3] == 8
	case sysRtSigprocmask:
		// SIG_SETMASK sets the mask read here less SIGKILL and SIGSTOP
		// whatever the mask was (a Go runtime's and glibc's around each
		// new thread); a query never stops here.
		var b [8]byte
		if args[0] != sigSetmask || args[3] != 8 {
			return false
		}
		if _, err := t.mm.mem.ReadMemory(args[1], b[:]); err != nil {
			return false
		}
		t.pendMask = binary.LittleEndian.Uint64(b[:]) &^ (1<<(unix.SIGKILL-1) | 1<<(unix.SIGSTOP-1))
		t.pendMaskSet = true
		return true
	case sysMunmap, sysMremap, sysMadvise, sysPkeyMprotect:
		return true
	case sysMprotect:
		return args[2]&protExec == 0 || !searched
	case sysMmap:
		return !searched
	}
	return false
}

// strictRequest reports whether call nr with args asks for seccomp strict
// mode.
func strictRequest(nr uint64, args [6]uint64) bool {
	return nr == sysSeccomp && args[0] == seccompSetModeStrict ||
		nr == sysPrctl && uint32(args[0]) == prSetSeccomp && args[1] == seccompModeStrict
}

// skipCall makes t's call, stopped before it runs, not run and return
// ret (orig_rax -1 at a PTRACE_EVENT_SECCOMP stop: kernel/seccomp.c runs
// no filter again on a skipped call).
//
// Preconditions: on the tracer thread; t is in a PTRACE_EVENT_SECCOMP stop.
func (m *mon) skipCall(t *thread, ret int64) {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("read the registers of thread %d: %w", t.tid, err))
		return
	}
	regs.Orig_rax = ^uint64(0)
	regs.Rax = uint64(ret)
	if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("skip the system call of thread %d: %w", t.tid, err))
	}
}

// resumeSyscalls reports whether t is to stop at its next system call's
// entry and exit (PTRACE_SYSCALL) rather than only at those the filter
// traces: always without the filter; with it, between a traced call's
// entry and its exit, and in emulated strict mode.
func (m *mon) resumeSyscalls(t *thread) bool {
	if t.mm.quiet && !t.sysEntry {
		return false // no trap of ours can fire (eager_linux_amd64.go)
	}
	return !m.filtered || t.sysEntry || t.strict || t.allCalls
}

// termDup follows the exit of a call of t that duplicates a descriptor
// (nr, with result ret): a new descriptor on patchprof's terminal that
// the filter does not trace calls on makes t's process stop at every
// call (allCalls).
//
// Preconditions: on the tracer thread; t is at the exit of call nr.
func (m *mon) termDup(t *thread, nr, ret uint64) {
	if !m.filtered || m.term == nil || t.allCalls || int64(ret) < 0 {
		return
	}
	fd := ret
	switch nr {
	case sysDup, sysFcntl:
	case sysDup2, sysDup3:
		var err error
		if fd, err = peekUser(t.tid, offRsi); err != nil {
			return
		}
	default:
		return
	}
	if slices.Contains(m.ttyFds, uint32(fd)) || !m.term.isTerm(t, fd) {
		return
	}
	for _, u := range m.threads {
		if u.tgid == t.tgid {
			u.allCalls = true
		}
	}
}

// termExec decides whether t, which has just exec'd, holds a descriptor
// on the terminal that the filter does not know (termDup).
//
// Preconditions: on the tracer thread; t is at its exec stop.
func (m *mon) termExec(t *thread) {
	t.allCalls = false
	if !m.filtered || m.term == nil {
		return
	}
	delete(m.term.known, t.tgid)
	for _, fd := range m.termFds(t) {
		if !slices.Contains(m.ttyFds, fd) {
			t.allCalls = true
		}
	}
}

// strictEntry emulates prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) or
// seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL) made by t, which strict mode
// would refuse over the monitor's filter (EINVAL), when the program has
// no filter of its own (natively, strict mode would be entered): the call
// is skipped, returning 0, and the thread is held to strict mode by the
// monitor (strictRefuses). It reports whether it did.
//
// Preconditions: on the tracer thread; t is stopped before the call runs.
func (m *mon) strictEntry(t *thread, nr uint64, args [6]uint64) bool {
	if !m.filtered || t.strict || t.mm.dead {
		return false
	}
	if nr == sysSeccomp && (args[1] != 0 || args[2] != 0) {
		return false // EINVAL natively too
	}
	if m.nativeFilters(t) != 0 {
		return false // EINVAL natively too: the program has a filter
	}
	m.skipCall(t, 0)
	t.strict = true
	return true
}

// nativeFilters returns how many seccomp filters t would run under
// without the monitor's (-1 if unknown).
func (m *mon) nativeFilters(t *thread) int {
	_, n, err := seccompOf("/proc/" + strconv.Itoa(t.tgid) + "/task/" + strconv.Itoa(t.tid) + "/status")
	if err != nil || n < 1 {
		return -1
	}
	return n - 1
}

// strictRefuses holds t, in emulated strict mode, to it at the entry of
// its call nr: any call but read, write, exit and rt_sigreturn
// (kernel/seccomp.c, mode1_syscalls) kills the thread with SIGKILL. It
// reports whether it did. A process's only thread is killed by SIGKILL;
// one of several leaves by exit(2) instead, which ends it alone, as the
// kernel's do_exit(SIGKILL) does (its exit status is not SIGKILL's).
//
// Preconditions: on the tracer thread; t is at a syscall-entry-stop.
func (m *mon) strictRefuses(t *thread, nr uint64) bool {
	switch nr {
	case sysRead, sysWrite, sysExit, sysRtSigreturn:
		return false
	}
	alone := true
	for _, u := range m.threads {
		if u.tgid == t.tgid && u != t {
			alone = false
		}
	}
	if alone {
		if err := unix.Tgkill(t.tgid, t.tid, unix.SIGKILL); err != nil {
			m.lose(fmt.Errorf("end thread %d, out of strict mode: %w", t.tid, err))
		}
		return true
	}
	if err := pokeUser(t.tid, offOrigRax, sysExit); err != nil {
		m.lose(fmt.Errorf("end thread %d, out of strict mode: %w", t.tid, err))
	}
	return true
}

// getSeccompExit makes prctl(PR_GET_SECCOMP) answer as it would natively
// when only the monitor's filter is there: 0.
//
// Preconditions: on the tracer thread; t is at the exit of prctl, whose
// result is ret.
func (m *mon) getSeccompExit(t *thread, ret uint64) {
	if !m.filtered || ret != 2 {
		return
	}
	opt, err := peekUser(t.tid, offRdi)
	if err != nil || uint32(opt) != prGetSeccomp || m.nativeFilters(t) != 0 {
		return
	}
	if err := pokeUser(t.tid, offRax, 0); err != nil {
		m.lose(fmt.Errorf("answer prctl(PR_GET_SECCOMP) of thread %d: %w", t.tid, err))
	}
}

// unkickAtStop is unkick for a thread that was resumed without
// system-call stops: at its interrupt's stop (PTRACE_EVENT_STOP), a
// system call it was in has ended with rax its result, before the kernel
// restarts anything (arch_do_signal_or_restart runs after the stop). A
// stop outside a system call has orig_rax -1.
//
// Preconditions: on the tracer thread; t is in the PTRACE_EVENT_STOP of
// an interrupt of ours.
func (m *mon) unkickAtStop(t *thread) {
	nr, err := peekUser(t.tid, offOrigRax)
	if err != nil || int64(nr) < 0 {
		return
	}
	rax, err := peekUser(t.tid, offRax)
	if err != nil {
		return
	}
	m.unkick(t, nr, rax)
}
