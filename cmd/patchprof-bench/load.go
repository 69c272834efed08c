package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// A Load is a bounded load on an HTTP server: Conns keep-alive connections
// side by side make Requests requests in all, each a GET of / whose answer
// must be 200 with the body Body.
type Load struct {
	Addr     string
	Conns    int
	Requests int
	Body     string
}

// A LoadResult is what a load measured: the requests answered as they
// should be, and the wall time from the first connection to the last
// answer.
type LoadResult struct {
	Done    int
	Elapsed time.Duration
}

// RPS is the requests per second of a load.
func (r LoadResult) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Done) / r.Elapsed.Seconds()
}

// request is the bytes of one request: HTTP/1.1 keeps the connection.
const request = "GET / HTTP/1.1\r\nHost: bench\r\n\r\n"

// share is how many of n requests connection i of conns makes: the
// remainder goes to the first ones, so that the shares add up to n.
func share(n, conns, i int) int {
	s := n / conns
	if i < n%conns {
		s++
	}
	return s
}

// run makes the load, each connection a goroutine, and stops at the first
// error or when ctx ends; the result counts the requests answered until
// then.
func (l Load) run(ctx context.Context) (LoadResult, error) {
	if l.Conns < 1 || l.Requests < l.Conns {
		return LoadResult{}, fmt.Errorf("load of %d requests over %d connections: want at least one request a connection", l.Requests, l.Conns)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
		errs []error
	)
	start := time.Now()
	for i := range l.Conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := l.connection(ctx, share(l.Requests, l.Conns, i))
			mu.Lock()
			defer mu.Unlock()
			done += n
			if err != nil {
				errs = append(errs, fmt.Errorf("connection %d: %w", i, err))
				cancel()
			}
		}()
	}
	wg.Wait()
	res := LoadResult{Done: done, Elapsed: time.Since(start)}
	if len(errs) > 0 {
		return res, errs[0]
	}
	return res, nil
}

// connection makes n requests over one connection, one after the other,
// and returns how many were answered as they should be.
func (l Load) connection(ctx context.Context, n int) (int, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", l.Addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	// The context's end closes the connection: a blocked read returns.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	r := bufio.NewReader(c)
	for k := 0; k < n; k++ {
		if _, err := io.WriteString(c, request); err != nil {
			return k, errors.Join(err, ctx.Err())
		}
		if err := l.answer(r); err != nil {
			return k, errors.Join(fmt.Errorf("request %d: %w", k+1, err), ctx.Err())
		}
	}
	return n, nil
}

// answer reads one answer and checks it: status 200, the body l.Body.
func (l Load) answer(r *bufio.Reader) error {
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		return err
	case resp.StatusCode != http.StatusOK || string(body) != l.Body:
		return fmt.Errorf("answer %q with body %q, want 200 with %q", resp.Status, body, l.Body)
	case resp.Close:
		return errors.New("the server closes the connection: want keep-alive")
	}
	return nil
}
