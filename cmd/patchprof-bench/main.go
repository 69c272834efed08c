package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

func main() {
	opts, err := parseOptions(os.Args[1:], workloadNames(), os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	os.Exit(run(opts))
}
