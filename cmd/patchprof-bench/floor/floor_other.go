//go:build !linux

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "floor: ptrace as patchprof uses it is Linux's: run the benchmark on Linux")
	os.Exit(125)
}
