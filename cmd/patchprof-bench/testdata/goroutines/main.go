// Command goroutines is the Go workload of cmd/patchprof-bench: 8 goroutines
// each compute fib(n) recursively (os.Args[1], default 25: 242,785 calls of
// fib and as many of leaf per goroutine) and the program prints the sum.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

const goroutines = 8

//go:noinline
func leaf(k int) int {
	if k < 2 {
		return k
	}
	return 0
}

//go:noinline
func fib(k int) int {
	if k < 2 {
		return leaf(k)
	}
	return fib(k-1) + fib(k-2)
}

func main() {
	n := 25
	if len(os.Args) > 1 {
		v, err := strconv.Atoi(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "usage: goroutines [N]")
			os.Exit(2)
		}
		n = v
	}
	var wg sync.WaitGroup
	sums := make([]int, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[g] = fib(n)
		}()
	}
	wg.Wait()
	total := 0
	for _, s := range sums {
		total += s
	}
	fmt.Printf("sum %d\n", total)
}
