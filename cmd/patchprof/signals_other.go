//go:build !unix

package main

import "os"

// send does nothing: no target runs outside Unix.
func send(pid int, s os.Signal) {}
