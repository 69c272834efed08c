// The target of TestCallGraphGoPreempted (callkinds_test.go): more
// goroutines than CPUs, each making its calls through a func value in a
// loop, so that Go's scheduler preempts them asynchronously (SIGURG) at
// any instruction, among them those between the start of a call's block
// and the call, and resumes them on another thread. Each of the 8
// goroutines makes exactly N calls of the closure from one site.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

// mix is called through a func value: its calls are indirect. Its five
// arguments make the call's block long, and so the stretch after the
// block's start where a preemption can find a goroutine.
var mix func(a, b, c, d, e int) int

//go:noinline
func spin(n int) int {
	s, t, u, v := 1, 2, 3, 4
	for i := 0; i < n; i++ {
		s = mix(i, s, t, u, v) // site:preempted
		t, u, v = u+1, v^s, t-i
	}
	return s + t + u + v
}

func main() {
	n, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: gopreemptcalls N")
		os.Exit(2)
	}
	k := len(os.Args)
	mix = func(a, b, c, d, e int) int { return (a ^ b) + c*d - e + k }
	var wg sync.WaitGroup
	sums := make([]int, 8)
	for g := range sums {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[g] = spin(n)
		}()
	}
	wg.Wait()
	fmt.Println("gopreemptcalls", len(sums)*n)
}
