// Activations left in the middle of a function by Go's non-local exits: a
// panic recovered several frames up (an explicit panic and a nil
// dereference's; "crash": one only main recovers, to exit 2), and
// runtime.Goexit from deep in a goroutine. Every
// frame between the panic and the recover, or above Goexit, never runs
// the code after its call.
package main

import (
	"fmt"
	"os"
	"runtime"
)

var sink int

//go:noinline
func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		if i%3 == 0 {
			s += i
		} else {
			s--
		}
	}
	return s
}

//go:noinline
func bottom(how string, n int, p *int) int {
	for i := 0; i < n; i++ {
		sink += i
		if i == n/2 {
			switch how {
			case "panic":
				panic(n) // PANIC_LINE
			case "nil":
				sink += *p // NIL_LINE
			case "goexit":
				runtime.Goexit()
			}
		}
		sink--
	}
	return n
}

//go:noinline
func level(how string, depth, n int) int {
	s := work(n)
	if depth == 0 {
		return s + bottom(how, n, nil)
	}
	if s&1 == 1 {
		s += level(how, depth-1, n+1)
	} else {
		s -= level(how, depth-1, n+2)
	}
	sink += s // AFTER_CALL
	return s
}

//go:noinline
func try(how string, n int) (r int) {
	defer func() {
		if v := recover(); v != nil {
			r = -1
		}
	}()
	return level(how, 4, n)
}

func main() {
	how := "panic"
	if len(os.Args) > 1 {
		how = os.Args[1]
	}
	switch how {
	case "crash": // a nil dereference recovered only by main, which exits 2
		defer func() {
			if recover() != nil {
				fmt.Println("crashed, sink", sink)
				os.Exit(2)
			}
		}()
		sink += level("nil", 4, 10)
	case "goexit":
		done := make(chan bool)
		for k := 0; k < 5; k++ {
			go func() {
				defer func() { done <- true }()
				sink += level(how, 4, 10+k)
			}()
			<-done
		}
	default:
		for k := 0; k < 5; k++ {
			sink += try(how, 10+k)
		}
	}
	fmt.Println("sink", sink)
}
