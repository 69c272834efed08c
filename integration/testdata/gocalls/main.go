// The call graph test's Go target (callgraph_test.go): a closure called
// 6 times through a func value, and one interface method call site run 9
// times, entering square.Area 4 times and circle.Area 5 times. The values
// come from a global the compiler cannot see through, so neither call is
// devirtualized or inlined.
package main

import (
	"fmt"
	"os"
)

type shape interface{ Area() int }

type square struct{ s int }

//go:noinline
func (q square) Area() int { return q.s * q.s }

type circle struct{ r int }

//go:noinline
func (c circle) Area() int { return 3 * c.r * c.r }

// adder returns a closure over base: its calls are indirect.
//
//go:noinline
func adder(base int) func(int) int {
	return func(x int) int { return base + x }
}

var (
	add    func(int) int
	shapes []shape
)

//go:noinline
func total() int {
	sum := 0
	for _, s := range shapes {
		sum += s.Area() // site:iface
	}
	return sum
}

//go:noinline
func sumAdds() int {
	sum := 0
	for i := 0; i < 6; i++ {
		sum += add(i) // site:closure
	}
	return sum
}

func main() {
	n := len(os.Args)
	add = adder(n)
	for i := 0; i < 9; i++ {
		if i%2 == 0 && i < 8 {
			shapes = append(shapes, square{n + i})
		} else {
			shapes = append(shapes, circle{n + i})
		}
	}
	fmt.Println("gocalls", total(), sumAdds())
}
