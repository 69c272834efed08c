//go:build unix

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// passOn sends s, caught by patchprof, to the target pid. SIGINT and SIGQUIT
// typed at the terminal reach the target directly (same foreground process
// group); passing them on too would deliver them twice. Sent to patchprof
// alone, they are passed on, like SIGTERM and SIGHUP.
func passOn(pid int, s os.Signal) {
	if s == syscall.SIGTERM || s == syscall.SIGHUP || !fromTerminal() {
		syscall.Kill(pid, s.(syscall.Signal))
	}
}

// fromTerminal reports whether patchprof runs in the foreground process group
// of the terminal on its standard input, where terminal signals go to the
// whole group.
func fromTerminal() bool {
	pgrp, err := unix.IoctlGetInt(int(os.Stdin.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// writable reports whether patchprof may create files in directory dir.
func writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }

// executable reports whether patchprof may execute the file at path.
func executable(path string) bool { return syscall.Access(path, 1 /* X_OK */) == nil }

// openNonblock opens without blocking: a FIFO opens at once (open(2),
// O_NONBLOCK), so reading a source never waits for a writer.
const openNonblock = unix.O_NONBLOCK
