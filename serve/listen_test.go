package serve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestListenTCP(t *testing.T) {
	for _, c := range []struct {
		addr, host string
		public     bool
	}{
		{":0", "127.0.0.1", false}, // no host: loopback, not every interface
		{"127.0.0.1:0", "127.0.0.1", false},
		{"localhost:0", "", false},
		{"0.0.0.0:0", "", true}, // every interface (Go reports [::])
	} {
		l, public, err := Listen(c.addr)
		if err != nil {
			t.Errorf("Listen(%q): %v", c.addr, err)
			continue
		}
		host, _, _ := net.SplitHostPort(l.Addr().String())
		if (c.host != "" && host != c.host) || public != c.public {
			t.Errorf("Listen(%q): bound %s, public %v; want host %s, public %v", c.addr, l.Addr(), public, c.host, c.public)
		}
		l.Close()
	}
	for _, addr := range []string{"8080", "unix:", "127.0.0.1:99999", "256.1.1.1:0"} {
		_, _, err := Listen(addr)
		var le *ListenError
		if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), "--listen "+addr+": ") {
			t.Errorf("Listen(%q): %v, want a *ListenError naming it", addr, err)
		}
	}
}

func TestServeUnix(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix sockets on windows")
	}
	path := filepath.Join(t.TempDir(), "pp.sock")
	l, public, err := Listen("unix:" + path)
	if err != nil {
		t.Fatal(err)
	}
	if public {
		t.Errorf("a Unix socket is public")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket %v %v, want mode 0600", fi.Mode(), err)
	}
	s := Serve(l, NewHandler(Options{Source: &fakeSource{step: 1}}))
	if s.URL() != "unix:"+path {
		t.Errorf("URL %q", s.URL())
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	resp, err := c.Get("http://patchprof/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("/healthz over the socket: %d %q", resp.StatusCode, body)
	}
	c.CloseIdleConnections()
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file left after Close: %v", err)
	}
	// A second patchprof on the same path is told what to do.
	l2, _, err := Listen("unix:" + path)
	if err != nil {
		t.Fatalf("socket path not reusable after Close: %v", err)
	}
	defer l2.Close()
	if _, _, err := Listen("unix:" + path); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("second Listen on a used socket: %v", err)
	}
}
