// Command goserver is the Go server of cmd/patchprof-bench (issue 27): a
// net/http server on 127.0.0.1 at an ephemeral port that answers every
// request with "hello\n" through one call of handle, the count patchprof
// must find equal to the requests made. It prints "listening PORT"; when
// its standard input ends it prints "served N", the requests it answered,
// and exits 0.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
)

var served atomic.Int64

// handle answers one request: one call per request.
//
//go:noinline
func handle(w http.ResponseWriter, _ *http.Request) {
	served.Add(1)
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "hello\n")
}

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "goserver:", err)
		os.Exit(1)
	}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		fmt.Printf("served %d\n", served.Load())
		os.Exit(0)
	}()
	fmt.Printf("listening %d\n", l.Addr().(*net.TCPAddr).Port)
	err = http.Serve(l, http.HandlerFunc(handle))
	fmt.Fprintln(os.Stderr, "goserver:", err)
	os.Exit(1)
}
