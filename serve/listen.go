package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// A ListenError is an address Listen could not open, with what to do.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("--listen %s: %v", e.Addr, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// Listen opens addr for the endpoints. "unix:PATH" is a Unix socket, made
// readable and writable by its owner only; "HOST:PORT" is TCP, and an empty
// host is 127.0.0.1: patchprof serves beyond its host only when given such
// a host explicitly. Public reports whether the socket is reachable from
// other hosts (its address is not a loopback one).
func Listen(addr string) (l net.Listener, public bool, err error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if path == "" {
			return nil, false, &ListenError{addr, errors.New("no socket path: give unix:/path/to/socket")}
		}
		l, err := net.Listen("unix", path)
		if err != nil {
			return nil, false, &ListenError{addr, fmt.Errorf("%w (a stale socket file? remove it)", err)}
		}
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, false, errors.Join(&ListenError{addr, err}, l.Close())
		}
		return l, false, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false, &ListenError{addr, fmt.Errorf("%w: give HOST:PORT, :PORT (loopback) or unix:PATH", err)}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	l, err = net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, false, &ListenError{addr, err}
	}
	ip := l.Addr().(*net.TCPAddr).IP
	return l, !ip.IsLoopback(), nil
}

// writeTimeout bounds the writing of one answer (a delta's window comes on
// top): a client that does not read is dropped.
const writeTimeout = 30 * time.Second

// A Server serves a Handler on a listener until Close.
type Server struct {
	srv  *http.Server
	l    net.Listener
	done chan error
}

// Serve starts serving h on l.
func Serve(l net.Listener, h http.Handler) *Server {
	s := &Server{
		srv: &http.Server{
			Handler: h,
			// Slow or idle clients hold a connection for bounded time only.
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      writeTimeout,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    16 << 10,
		},
		l:    l,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(l) }()
	return s
}

// URL is the server's base URL: http://HOST:PORT/, or unix:PATH for a Unix
// socket.
func (s *Server) URL() string {
	if a, ok := s.l.Addr().(*net.UnixAddr); ok {
		return "unix:" + a.Name
	}
	return "http://" + s.l.Addr().String() + "/"
}

// Close stops the server: it stops accepting, lets the requests in flight
// finish until ctx is done, then closes their connections. A Unix socket's
// file is removed.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		// The requests still in flight are cut short: not a failure.
		err = s.srv.Close()
	}
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
