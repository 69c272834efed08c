// Command goswitch has a dense switch that the Go compiler (1.19 and
// later) turns into a jump table, for cfg's Go test (realbin_test.go).
package main

import (
	"fmt"
	"os"
)

//go:noinline
func pick(x int) string {
	switch x {
	case 0:
		return "zero" + os.Args[0]
	case 1:
		return "one"
	case 2:
		return "two" + os.Args[0]
	case 3:
		return "three"
	case 4:
		return "four" + os.Args[0]
	case 5:
		return "five"
	case 6:
		return "six" + os.Args[0]
	case 7:
		return "seven"
	case 8:
		return "eight"
	}
	return "many"
}

func main() {
	n := 0
	for i := 0; i < 20; i++ {
		n += len(pick(i % 11))
	}
	fmt.Println(n)
}
