//go:build !linux

package main

// isTerminal reports false: patchprof only runs targets on Linux, and
// elsewhere only renders saved profiles, in plain text.
func isTerminal(fd uintptr) bool { return false }

// terminalWidth reports 0 (unknown) outside Linux.
func terminalWidth(fd uintptr) int { return 0 }
