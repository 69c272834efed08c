//go:build !unix

package main

import "os"

// passOn does nothing: no target runs outside Linux.
func passOn(pid int, s os.Signal) {}

// writable reports true: the write itself reports any error.
func writable(dir string) bool { return true }

// executable reports true: starting the program reports any error.
func executable(path string) bool { return true }

// openNonblock: no FIFOs to wait for outside Unix.
const openNonblock = 0

// setIDNotes: no set-user-ID programs outside Unix.
func setIDNotes(path, prog string) []string { return nil }
