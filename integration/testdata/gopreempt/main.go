// Command gopreempt keeps more goroutines busy than there are CPUs, so
// that Go's scheduler preempts them asynchronously (SIGURG) at any
// instruction of fib, and a goroutine parked so resumes wherever it was
// stopped. Each checks every result; a wrong one exits 3. It prints
// "ready" once every goroutine has run, and on a line (or end of file) on
// its standard input prints how many results it checked and exits 0.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	var checked atomic.Int64
	var started sync.WaitGroup
	for g := 0; g < 8; g++ {
		started.Add(1)
		go func() {
			once := false
			for {
				if got := fib(18); got != 2584 {
					fmt.Fprintf(os.Stderr, "fib(18) = %d, want 2584\n", got)
					os.Exit(3)
				}
				checked.Add(1)
				if !once {
					once = true
					started.Done()
				}
			}
		}()
	}
	started.Wait()
	fmt.Println("ready", os.Getpid())
	bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Println("ok", checked.Load() > 0)
}
