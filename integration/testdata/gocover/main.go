// Command gocover calls functions with no frame and with small, large (up to
// 4 KiB) and huge (over 4 KiB) stack frames a known number of times, the
// recursive ones from fresh goroutines so that their stacks grow again and
// again, and checks its own count of the huge-frame calls. Built with -cover
// it is the oracle for patchprof's function counts (integration/gocover_test.go).
package main

import (
	"fmt"
	"os"
	"sync"
)

const (
	workers = 4    // goroutines running rounds at once
	rounds  = 5    // fresh goroutines per worker and recursive function
	leaves  = 1000 // calls of leaf
	// Recursion depths: each reaches tens or hundreds of KiB of stack, far
	// beyond a new goroutine's, so the stack grows several times.
	smallDepth = 1000
	largeDepth = 100
	hugeDepth  = 40
)

var (
	mu    sync.Mutex
	huges int // calls of huge, by the program's own count
)

// leaf has no frame and no stack check at all.
//
//go:noinline
func leaf(x int) int {
	return x*3 + 1
}

// small has a small frame (CMPQ SP, 16(R14)).
//
//go:noinline
func small(n int) int {
	if n == 0 {
		return leaf(n)
	}
	return small(n-1) + n%7
}

// large has a frame between 128 bytes and 4 KiB (LEAQ -n(SP), R12; CMPQ
// R12, 16(R14)).
//
//go:noinline
func large(n int) int {
	var buf [1024]byte
	for i := 0; i < len(buf); i += 256 {
		buf[i] = byte(n + i)
	}
	if n == 0 {
		return int(buf[0])
	}
	return large(n-1) + int(buf[(n*256)%len(buf)])
}

// huge has a frame over 4 KiB (MOVQ SP, R12; SUBQ $n, R12; JCS; CMPQ R12,
// 16(R14)).
//
//go:noinline
func huge(n int) int {
	var buf [8192]byte
	mu.Lock()
	huges++ // HUGE_BODY
	mu.Unlock()
	for i := 0; i < len(buf); i += 512 {
		buf[i] = byte(n + i)
	}
	if n == 0 {
		return int(buf[0])
	}
	return huge(n-1) + int(buf[(n*512)%len(buf)])
}

// fresh runs f on a new goroutine, whose stack starts small.
//
//go:noinline
func fresh(f func(int) int, n int) int {
	done := make(chan int)
	go func() {
		done <- f(n)
	}()
	return <-done
}

// worker runs each recursion on fresh goroutines, rounds times.
//
//go:noinline
func worker(sums []int, w int) {
	for r := 0; r < rounds; r++ {
		sums[w] += fresh(small, smallDepth) + fresh(large, largeDepth) + fresh(huge, hugeDepth)
	}
}

func main() {
	sum := 0
	for i := 0; i < leaves; i++ {
		sum += leaf(i)
	}
	var wg sync.WaitGroup
	sums := make([]int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(sums, w)
		}()
	}
	wg.Wait()
	for _, s := range sums {
		sum += s
	}
	fmt.Printf("huge %d sum %d\n", huges, sum)
	if huges != workers*rounds*(hugeDepth+1) {
		os.Exit(1)
	}
}
