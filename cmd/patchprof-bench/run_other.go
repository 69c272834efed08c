//go:build !linux

package main

import (
	"fmt"
	"os"
)

// run says that the benchmark needs Linux: patchprof runs only there.
func run(*Options) int {
	fmt.Fprintln(os.Stderr, "bench: patchprof profiles Linux x86-64 programs: run the benchmark on Linux")
	return 1
}
