// Command goroutines calls work from 8 goroutines, 5000 times each, and
// prints the number of calls it made by its own count.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

const (
	goroutines = 8
	calls      = 5000
)

var total atomic.Int64

//go:noinline
func work(x int) int {
	total.Add(1) // WORK_BODY
	return x*3 + 1
}

func main() {
	var wg sync.WaitGroup
	sums := make([]int, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				sums[g] += work(i)
			}
		}(g)
	}
	wg.Wait()
	fmt.Printf("calls %d\n", total.Load())
}
