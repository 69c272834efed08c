// Command gohello prints a line: the start of a Go program.
package main

import "fmt"

func main() { fmt.Println("hello") }
