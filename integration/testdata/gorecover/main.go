// Dereferences a nil pointer 1000 times, recovering each panic, and a valid
// one 1000 times: the faulting load is a line site, so under the out-of-line
// engine the fault happens in a slot and must reach Go's runtime with the
// original PC (its sigpanic throws on a PC outside Go code).
package main

import "fmt"

//go:noinline
func deref(p *int) int {
	return *p // DEREF
}

func try(p *int) (v int, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return deref(p), true
}

func main() {
	x := 7
	recovered, sum := 0, 0
	for i := 0; i < 1000; i++ {
		if _, ok := try(nil); !ok {
			recovered++
		}
		v, _ := try(&x)
		sum += v
	}
	fmt.Printf("recovered %d sum %d\n", recovered, sum)
}
