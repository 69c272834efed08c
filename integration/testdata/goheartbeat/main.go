// Command goheartbeat calls work from 4 goroutines every 100 us and prints a
// heartbeat with the running total twice a second, argv[1] times; with
// argv[1] "stdin", until its standard input ends (after a last beat), so a
// test decides when it ends, and each line it reads is answered at once with
// "asked TOTAL", so a test knows calls were made after a moment of its own.
package main

import (
	"bufio"
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
	var eof chan struct{}
	if len(os.Args) > 1 && os.Args[1] == "stdin" {
		n, eof = -1, make(chan struct{})
		go func() {
			r := bufio.NewReader(os.Stdin)
			for {
				if _, err := r.ReadString('\n'); err != nil {
					close(eof)
					return
				}
				fmt.Println("asked", calls.Load())
			}
		}()
	} else if len(os.Args) > 1 {
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
	for s := 1; s <= n || n < 0; s++ {
		var end bool
		select {
		case <-eof:
			// Half a second more, so the last beat counts more calls
			// than the one before, as every beat does.
			time.Sleep(500 * time.Millisecond)
			end = true
		case <-time.After(500 * time.Millisecond):
		}
		fmt.Println("beat", s, calls.Load())
		if end {
			return
		}
	}
}
