//go:build linux && amd64

package monitor

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tickSignal is the signal that wakes the tracer thread out of wait4 for a
// round of interrupt sampling (isample_linux_amd64.go). Go's runtime
// handles every signal with SA_RESTART, after which the kernel restarts an
// interrupted wait4 instead of returning EINTR (signal(7), "Interruption of
// system calls"); for this one signal patchprof takes SA_RESTART off Go's
// handler, so that a tgkill of the tracer thread ends its wait. The signal
// is sent to the tracer thread only, and Go's handler queues it for the
// channel below, which nobody reads: it does nothing else.
const tickSignal = syscall.Signal(62) // a real-time signal neither Go nor glibc uses

// saRestart is SA_RESTART (asm-generic/signal-defs.h).
const saRestart = 0x10000000

// kernelSigaction is struct sigaction as rt_sigaction(2) takes it on
// x86-64 (arch/x86/include/uapi/asm/signal.h), not libc's.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

var (
	tickOnce sync.Once
	tickErr  error
)

// setupTickSignal installs Go's handler for tickSignal without SA_RESTART,
// once per process.
func setupTickSignal() error {
	tickOnce.Do(func() {
		signal.Notify(make(chan os.Signal, 1), tickSignal)
		var act kernelSigaction
		if err := rtSigaction(tickSignal, nil, &act); err != nil {
			tickErr = fmt.Errorf("read the handler of signal %d: %w", int(tickSignal), err)
			return
		}
		if act.handler == 0 || act.handler == 1 { // SIG_DFL, SIG_IGN: not Go's
			tickErr = fmt.Errorf("signal %d has no Go handler", int(tickSignal))
			return
		}
		act.flags &^= saRestart
		if err := rtSigaction(tickSignal, &act, nil); err != nil {
			tickErr = fmt.Errorf("set the handler of signal %d: %w", int(tickSignal), err)
		}
	})
	return tickErr
}

// rtSigaction is rt_sigaction(2) with an 8-byte signal mask.
func rtSigaction(sig syscall.Signal, act, old *kernelSigaction) error {
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
