//go:build unix

package main

import (
	"os"
	"syscall"
)

// send sends s to pid, even when the terminal could have sent it too
// (passOn): a signal held while the target started may have come before
// the target existed.
func send(pid int, s os.Signal) {
	if sig, ok := s.(syscall.Signal); ok {
		syscall.Kill(pid, sig)
	}
}
