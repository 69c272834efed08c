// Command goswitch runs a switch of ten integer cases, which the Go compiler
// turns into a jump table (cmd/compile, minJumpTableSize 8), 1000 times:
// each case runs exactly 100 times.
package main

import "fmt"

var total int

//go:noinline
func sink(x int) { total += x }

//go:noinline
func dispatch(i int) {
	switch i % 10 {
	case 0:
		sink(3)
	case 1:
		sink(5)
	case 2:
		sink(7)
	case 3:
		sink(11)
	case 4:
		sink(13)
	case 5:
		sink(17)
	case 6:
		sink(19)
	case 7:
		sink(23)
	case 8:
		sink(29)
	case 9:
		sink(31)
	}
}

func main() {
	for i := 0; i < 1000; i++ {
		dispatch(i)
	}
	fmt.Println("total", total)
}
