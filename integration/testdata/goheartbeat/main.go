// Command goheartbeat calls work from 4 goroutines every 100 us and prints a
// heartbeat with the running total twice a second, argv[1] times.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

var calls atomic.Int64

//go:noinline
func work() {
	calls.Add(1)
}

func main() {
	n := 8
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	for g := 0; g < 4; g++ {
		go func() {
			for {
				work()
				time.Sleep(100 * time.Microsecond)
			}
		}()
	}
	fmt.Println("ready", os.Getpid())
	for s := 1; s <= n; s++ {
		time.Sleep(500 * time.Millisecond)
		fmt.Println("beat", s, calls.Load())
	}
}
