//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The target's signal state, kept invisible.
//
// Every trap of ours (an int3 at a site, a single-step, a temporary int3) is
// a forced SIGTRAP, and the kernel's rule for forced signals (kernel/signal.c,
// force_sig_info_to_task) is: when SIGTRAP is blocked in the thread or
// ignored by the process, its disposition becomes SIG_DFL (sa_handler only:
// flags, mask and restorer stay) and it is unblocked in the thread, before the
// tracer suppresses the signal. A program that ignores or blocks SIGTRAP
// would then die of its next SIGTRAP, and would see the change. After the
// trap the evidence is gone, so the monitor keeps its own copy of what the
// program set: the disposition of every signal per process and the blocked
// mask per thread, read at the start and then followed through the system
// calls that change them (the threads run under PTRACE_SYSCALL). After a trap
// of ours in a thread where SIGTRAP was blocked or ignored, the monitor puts
// back what the kernel changed: the mask with PTRACE_SETSIGMASK, the
// disposition with an rt_sigaction run in the thread. A trap that stands for
// the program's own (its int3 or int1 at a site) is left to have the
// kernel's effect, as it would natively.

// Signal numbers and flags (asm-generic/signal.h, x86-64 kernel ABI).
const (
	sigDFL      = 0
	sigIGN      = 1
	saNodefer   = 0x40000000
	saResethand = 0x80000000
	nsig        = 64

	sysRtSigaction   = 13
	sysRtSigprocmask = 14
	sysRtSigreturn   = 15
	sysRtSigsuspend  = 130
	sysPselect6      = 270
	sysPpoll         = 271
	sysEpollPwait    = 281
	sysIoPgetevents  = 333
	sysEpollPwait2   = 441
)

// trapBit is SIGTRAP's bit in a mask.
const trapBit = uint64(1) << (unix.SIGTRAP - 1)

// unblockable are the bits the kernel never lets a thread block.
const unblockable = uint64(1)<<(unix.SIGKILL-1) | uint64(1)<<(unix.SIGSTOP-1)

// A sigAction is struct kernel_sigaction as rt_sigaction reads and writes
// it on x86-64: handler, flags, restorer, mask.
type sigAction struct {
	Handler, Flags, Restorer, Mask uint64
}

// handled reports whether the action runs a handler.
func (a sigAction) handled() bool { return a.Handler > sigIGN }

func (a sigAction) bytes() []byte {
	b := make([]byte, 32)
	binary.LittleEndian.PutUint64(b[0:], a.Handler)
	binary.LittleEndian.PutUint64(b[8:], a.Flags)
	binary.LittleEndian.PutUint64(b[16:], a.Restorer)
	binary.LittleEndian.PutUint64(b[24:], a.Mask)
	return b
}

func actionFrom(b []byte) sigAction {
	return sigAction{
		Handler:  binary.LittleEndian.Uint64(b[0:]),
		Flags:    binary.LittleEndian.Uint64(b[8:]),
		Restorer: binary.LittleEndian.Uint64(b[16:]),
		Mask:     binary.LittleEndian.Uint64(b[24:]),
	}
}

// A sigTable is the signal dispositions of one process (its sighand), as the
// program set them: act[n-1] is signal n's.
type sigTable struct {
	act [nsig]sigAction
}

func (s *sigTable) clone() *sigTable { c := *s; return &c }

// execReset is what execve does to the dispositions (flush_signal_handlers):
// handlers become SIG_DFL, ignored signals stay ignored, and the rest of
// each action is cleared.
func (s *sigTable) execReset() {
	for k := range s.act {
		h := s.act[k].Handler
		if h != sigIGN {
			h = sigDFL
		}
		s.act[k] = sigAction{Handler: h}
	}
}

// trapRisk reports whether a forced SIGTRAP in a thread whose mask is mask
// changes the program's signal state (see the comment at the top).
func (s *sigTable) trapRisk(mask uint64) bool {
	return mask&trapBit != 0 || s.act[unix.SIGTRAP-1].Handler == sigIGN
}

// forced applies the kernel's forced-signal rule for sig to the copy: the
// program's own fault or trap happened, with the kernel's effect, natively.
func (t *thread) forced(sig int) {
	if sig < 1 || sig > nsig || t.sigs == nil {
		return
	}
	bit := uint64(1) << (sig - 1)
	a := &t.sigs.act[sig-1]
	if t.mask&bit != 0 || a.Handler == sigIGN {
		a.Handler = sigDFL
		t.mask &^= bit
	}
}

// readSignalState reads the dispositions of process pid as /proc shows them
// (SigIgn; SigCgt for the handled ones, whose actions are read afterwards by
// readHandlers) and the blocked mask of each of its threads.
func readSignalState(pid int) (tab *sigTable, caught uint64, err error) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	ign, err := statusMask(path, "SigIgn")
	if err != nil {
		return nil, 0, err
	}
	if caught, err = statusMask(path, "SigCgt"); err != nil {
		return nil, 0, err
	}
	tab = &sigTable{}
	for k := range tab.act {
		if ign&(1<<k) != 0 {
			tab.act[k].Handler = sigIGN
		}
	}
	return tab, caught, nil
}

// statusMask reads a hexadecimal signal mask line of a /proc status file.
func statusMask(path, key string) (uint64, error) {
	v, ok := statusField(path, key)
	if !ok {
		return 0, fmt.Errorf("no %s in %s", key, path)
	}
	return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
}

// readHandlers reads the whole action of every signal in caught with
// rt_sigaction run in t (attach: the program set them before we came).
//
// Preconditions: on the tracer thread; every thread of t's process is
// stopped and t can inject.
func (m *mon) readHandlers(t *thread, caught uint64) error {
	for sig := 1; sig <= nsig; sig++ {
		if caught&(1<<(sig-1)) == 0 {
			continue
		}
		var a sigAction
		if err := m.sigaction(t, sig, nil, &a); err != nil {
			return fmt.Errorf("read the action of signal %d: %w", sig, err)
		}
		t.sigs.act[sig-1] = a
	}
	return nil
}

// sigaction runs rt_sigaction(sig, act, old) in t, with the structures in
// the stack below its red zone (where nothing of the program's lives while
// it is stopped), and the system call over t's own PC.
//
// Preconditions: on the tracer thread; t can inject; no other thread of
// its space runs code at t's PC.
func (m *mon) sigaction(t *thread, sig int, act, old *sigAction) error {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
		return err
	}
	buf := (regs.Rsp - 128 - 64) &^ 15
	saved := make([]byte, 64)
	if _, err := t.mm.mem.ReadMemory(buf, saved); err != nil {
		return fmt.Errorf("read the stack at %#x: %w", buf, err)
	}
	var actAddr, oldAddr uint64
	if act != nil {
		actAddr = buf
		if _, err := t.mm.mem.WriteMemory(buf, act.bytes()); err != nil {
			return fmt.Errorf("write the stack at %#x: %w", buf, err)
		}
	}
	if old != nil {
		oldAddr = buf + 32
	}
	// The system call instruction goes at the program's entry point
	// (_start, run once at start-up), not at t's PC: code another thread
	// may be about to run (the instruction after a clone, which a new
	// thread runs too) must never hold it.
	at := regs.Rip
	if entry, err := loadBias(t.tgid, 0); err == nil && entry != 0 {
		at = entry
	}
	r, err := m.syscallIn(t, at, sysRtSigaction, uint64(sig), actAddr, oldAddr, 8)
	if err == nil && int64(r) < 0 {
		err = unix.Errno(-int64(r))
	}
	if err == nil && old != nil {
		b := make([]byte, 32)
		if _, e := t.mm.mem.ReadMemory(oldAddr, b); e != nil {
			err = e
		} else {
			*old = actionFrom(b)
		}
	}
	if _, werr := t.mm.mem.WriteMemory(buf, saved); werr != nil && err == nil {
		err = fmt.Errorf("restore the stack at %#x: %w", buf, werr)
	}
	return err
}

// repair puts back what a trap of ours made the kernel change in t's
// signal state (see the comment at the top). It costs nothing unless the
// thread trapped with SIGTRAP blocked or ignored.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) repair(t *thread) {
	if !t.trapped {
		return
	}
	t.trapped = false
	if t.sigs == nil || !t.sigs.trapRisk(t.mask) || t.mm.dead {
		return
	}
	m.res.SignalRepairs++
	if debug {
		dbg("repair tid=%d act=%+v mask=%#x\n", t.tid, t.sigs.act[unix.SIGTRAP-1], t.mask)
	}
	// The mask first: a SIGTRAP the program keeps pending must stay so
	// while the rt_sigaction runs.
	if t.mask&trapBit != 0 {
		if err := setSigmask(t.tid, t.mask); err != nil {
			m.leaveChanged(fmt.Errorf("block SIGTRAP again in thread %d after a breakpoint: %w", t.tid, err))
		}
	}
	act := t.sigs.act[unix.SIGTRAP-1]
	if act.Handler == sigDFL {
		return
	}
	// The disposition is the process's: no other thread may run the
	// system call instruction written over t's PC meanwhile.
	held := m.cur == t.mm
	if !held {
		m.stopOthers(t.mm, t)
	}
	if err := m.sigaction(t, int(unix.SIGTRAP), &act, nil); err != nil {
		m.leaveChanged(fmt.Errorf("restore the SIGTRAP action of process %d after a breakpoint: %w", t.tgid, err))
	}
	if !held {
		m.resumeOthers(t.mm, t)
	}
}

// syscallStop follows a system call of t that may change its signal state:
// at the entry of rt_sigaction it reads the new action, at the exit it
// records it if the call succeeded; at the exit of a call that changes or
// restores the blocked mask it reads the mask. It also tells
// Options.Terminal about the calls on patchprof's terminal (termEntry,
// termExit).
//
// Preconditions: on the tracer thread; t is in a syscall-stop.
func (m *mon) syscallStop(t *thread) {
	var si syscallInfo
	if err := getSyscallInfo(t.tid, &si); err != nil {
		m.lose(fmt.Errorf("read the system call of thread %d: %w", t.tid, err))
		return
	}
	if debug {
		dbg("syscall tid=%d op=%d val=%#x args=%x\n", t.tid, si.Op, si.Val, si.Args)
	}
	switch si.Op {
	case unix.PTRACE_SYSCALL_INFO_ENTRY:
		m.sysEnter(t, &si)
	case unix.PTRACE_SYSCALL_INFO_EXIT:
		m.sysExit(t, &si)
	}
}

// sysEnter follows the entry of system call si.Val of t, seen at its
// syscall-entry-stop or at the PTRACE_EVENT_SECCOMP stop of the monitor's
// filter (sysfilter_linux_amd64.go), where the call has not run either.
//
// Preconditions: on the tracer thread; t is stopped before its call runs.
func (m *mon) sysEnter(t *thread, si *syscallInfo) {
	// The call has not run: no system call may be injected over it.
	t.inSyscall = true
	t.atEntry = true
	t.sysEntry = true
	t.sysNr = si.Val
	t.pendSig = 0
	if t.strict && m.strictRefuses(t, si.Val) {
		return
	}
	m.termEntry(t, si)
	m.guardEntry(t, si.Val, si.Args)
	m.textEntry(t, si.Val, si.Args)
	if si.Val == sysRtSigaction && si.Args[1] != 0 && si.Args[0] >= 1 && si.Args[0] <= nsig {
		b := make([]byte, 32)
		if _, err := t.mm.mem.ReadMemory(si.Args[1], b); err == nil {
			t.pendSig, t.pendAct = int(si.Args[0]), actionFrom(b)
		}
	}
}

// sysExit follows the exit of t's system call, whose result is si.Val.
//
// Preconditions: on the tracer thread; t is in a syscall-exit-stop.
func (m *mon) sysExit(t *thread, si *syscallInfo) {
	// The number seen at the entry: rt_sigreturn sets orig_rax to -1.
	// An exit without its entry (attached mid-call) reads orig_rax.
	nr := t.sysNr
	if !t.sysEntry {
		var err error
		if nr, err = peekUser(t.tid, offOrigRax); err != nil {
			m.lose(fmt.Errorf("read the system call of thread %d: %w", t.tid, err))
			return
		}
	}
	t.sysEntry = false
	if t.kicked {
		m.unkick(t, nr, si.Val)
	}
	m.termExit(t, nr)
	m.termDup(t, nr, si.Val)
	m.guardExit(t, nr, si.Val)
	// The call is done: a system call may be injected here. One
	// that is to restart (a restart code in rax) is restarted by
	// syscallIn itself.
	t.inSyscall = false
	m.textExit(t, nr, si.Val)
	switch nr {
	case sysRtSigaction:
		if t.pendSig != 0 && si.Val == 0 && t.sigs != nil {
			t.sigs.act[t.pendSig-1] = t.pendAct
		}
		t.pendSig = 0
	case sysRtSigprocmask, sysRtSigreturn, sysRtSigsuspend, sysPselect6, sysPpoll,
		sysEpollPwait, sysEpollPwait2, sysIoPgetevents:
		m.readMask(t)
		if nr == sysRtSigreturn {
			t.leaveHandler()
			m.afterSigreturn(t)
		}
	case sysPrctl:
		m.getSeccompExit(t, si.Val)
	}
}

// restarts reports whether a system call's result is one of the kernel's
// restart codes (ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND,
// ERESTART_RESTARTBLOCK: include/linux/errno.h), which never reach the
// program: the call is restarted or turned into EINTR on the way out.
func restarts(rax uint64) bool {
	switch int64(rax) {
	case -512, -513, -514, -516:
		return true
	}
	return false
}

// leaveEntry makes a thread in a syscall-entry-stop one about to execute
// its system call instruction, so that the thread can run a system call of
// ours first: the call is swapped for getpid, run to its exit, and the
// thread rewound onto its instruction with its number in rax; it runs when
// the thread runs again.
//
// The usual way to skip a call (orig_rax -1) is not taken: seccomp runs
// after the entry stop, on the number the tracer leaves, so a filter that
// refuses unknown numbers would make the skipped call fail with its errno
// (written into rax, which the rewound instruction then runs as a number)
// or kill the process. getpid is let through by any filter that lets
// patchprof's own calls through (mayInject), and changes nothing. A
// process patchprof injects nothing into must not come here: its thread
// is let go in its entry stop, and the call runs as the program made it.
//
// Preconditions: on the tracer thread; t is in a syscall-entry-stop; its
// space may have system calls injected.
func (m *mon) leaveEntry(t *thread) {
	var entry unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &entry); err != nil {
		m.lose(fmt.Errorf("read the registers of thread %d: %w", t.tid, err))
		return
	}
	regs := entry
	regs.Orig_rax = sysGetpid
	if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("swap the system call of thread %d: %w", t.tid, err))
		return
	}
	_, resend, err := m.stepSyscall(t, entry.Rip-2) // syscall is two bytes
	if errors.Is(err, errThreadEnded) {
		return
	}
	if err != nil {
		m.lose(fmt.Errorf("run thread %d out of its system call: %w", t.tid, err))
	}
	regs = entry
	regs.Rax = entry.Orig_rax
	regs.Orig_rax = ^uint64(0) // not in a system call: nothing to restart
	regs.Rip -= 2
	if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("rewind thread %d onto its system call: %w", t.tid, err))
		return
	}
	t.inSyscall, t.atEntry, t.sysEntry = false, false, false
	for _, s := range resend {
		m.resend(t, s)
	}
}

// readMask reads t's blocked mask into the copy.
func (m *mon) readMask(t *thread) {
	mask, err := getSigmask(t.tid)
	if err != nil {
		m.lose(fmt.Errorf("read the signal mask of thread %d: %w", t.tid, err))
		return
	}
	t.mask = mask
}

// delivering follows the delivery of sig to t: a handler runs with its
// action's mask (and sig, unless SA_NODEFER) added to the thread's, and
// SA_RESETHAND puts the default back. A forced signal (a fault) first has
// the kernel's forced-signal effect.
//
// Preconditions: on the tracer thread; t is in the signal-delivery-stop of
// sig, about to be resumed with it.
func (m *mon) delivering(t *thread, sig int, forced bool) {
	if t.sigs == nil || sig < 1 || sig > nsig {
		return
	}
	if forced {
		t.forced(sig)
	} else {
		// The kernel's mask is the program's here (a temporary mask of
		// sigsuspend or ppoll included), unless a trap of ours is still
		// to repair.
		if !t.trapped {
			m.readMask(t)
		}
	}
	a := &t.sigs.act[sig-1]
	if !a.handled() {
		t.noted = 0
		return
	}
	m.enterHandler(t)
	add := a.Mask
	if a.Flags&saNodefer == 0 {
		add |= 1 << (sig - 1)
	}
	t.mask |= add &^ unblockable
	if a.Flags&saResethand != 0 {
		a.Handler = sigDFL
	}
}

// readSignals starts the copy of the signal state of the stopped process
// pid (launch or attach), before anything is planted. first are the stops
// the threads reported at the attach (noteFirstStops), nil at a launch.
//
// Preconditions: on the tracer thread; every thread of pid is registered
// and stopped.
func (m *mon) readSignals(pid int, first map[int]stop) error {
	sigs, caught, err := readSignalState(pid)
	if err != nil {
		return fmt.Errorf("read the signal state of process %d: %w", pid, err)
	}
	for _, t := range m.threads {
		t.sigs = sigs
		if t.mask, err = getSigmask(t.tid); err != nil && !gone(err) {
			return fmt.Errorf("read the signal mask of thread %d: %w", t.tid, err)
		}
	}
	// The sandbox is read now, before anything is injected (at attach,
	// the handlers below), and said once whatever the engine.
	open := true
	if t := m.threads[pid]; t != nil {
		open = m.mayInject(t.mm)
	}
	if caught == 0 {
		return nil
	}
	if !open {
		// rt_sigaction would be injected to read the handlers: they are
		// known to be handlers (SigCgt), not what they are. Only a
		// SIGTRAP repair needs more, and it injects nothing here either.
		for sig := 1; sig <= nsig; sig++ {
			if caught&(1<<(sig-1)) != 0 {
				sigs.act[sig-1].Handler = sigIGN + 1
			}
		}
		return nil
	}
	via, err := m.injector(pid, first)
	if err != nil {
		return fmt.Errorf("read the signal handlers of process %d: %w", pid, err)
	}
	return m.readHandlers(via, caught)
}

// trapRisk reports whether a trap of ours in t changes its signal state.
func (t *thread) trapRisk() bool { return t.sigs != nil && t.sigs.trapRisk(t.mask) }

// requeue makes the signal of siginfo si pending again for t, as it was
// sent: rt_tgsigqueueinfo keeps its sender and data, but refuses to forge a
// kill or tgkill (si_code SI_USER or SI_TKILL), which are sent again as
// they were made.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) requeue(t *thread, si *siginfo) {
	var err error
	if si.Code < 0 && si.Code != siTkill {
		err = tgsigqueueinfo(t.tgid, t.tid, int(si.Signo), si)
	} else {
		err = unix.Tgkill(t.tgid, t.tid, unix.Signal(si.Signo))
	}
	if err != nil {
		m.lose(fmt.Errorf("keep signal %d pending for thread %d: %w", si.Signo, t.tid, err))
	}
}
