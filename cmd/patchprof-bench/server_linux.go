package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchprof/patchprof/profile"
)

// A serverSlot is one engine on one server over the rounds.
type serverSlot struct {
	ServerMeasure
	// done is set when the engine timed out or failed: it is not run
	// again.
	done bool
}

// serverBody is what both servers answer to every request.
const serverBody = "hello\n"

// prepareServer lays out a server's slots: one per engine among the
// configurations; the others cannot attach.
func (b *bench) prepareServer(wr *workloadRun) {
	for _, cfg := range b.opts.Configs {
		if !isEngine(cfg) {
			continue
		}
		s := &serverSlot{ServerMeasure: ServerMeasure{Config: cfg,
			Label: fmt.Sprintf("patchprof --engine %s %s -p", cfg, strings.Join(wr.w.Mode, " "))}}
		if b.opts.Skip[wr.w.Name+":"+cfg] {
			s.Note, s.done = "skipped (-skip)", true
		}
		wr.servers = append(wr.servers, s)
	}
}

// runServer runs one round of every engine on a server.
func (b *bench) runServer(wr *workloadRun, rep int) {
	for _, s := range wr.servers {
		if s.done {
			continue
		}
		err := b.serverRound(wr, s)
		last := len(s.Attached) - 1
		switch {
		case s.TimedOut:
			s.done = true
			fmt.Fprintf(b.log, "bench: %d/%d %-10s %-9s timed out\n", rep, b.opts.Reps, wr.w.Name, s.Config)
		case err != nil:
			s.done = true
			s.Note = "failed: " + shorten(firstLine([]byte(err.Error())), 90)
			fmt.Fprintf(b.log, "bench: %d/%d %-10s %-9s failed: %v\n", rep, b.opts.Reps, wr.w.Name, s.Config, err)
		default:
			fmt.Fprintf(b.log, "bench: %d/%d %-10s %-9s %s req/s before, %s attached, %s after\n", rep, b.opts.Reps,
				wr.w.Name, s.Config, formatRate(s.Before[last]), formatRate(s.Attached[last]), formatRate(s.After[last]))
		}
		// A load that times out is slow, not wrong: the table says so.
		if err != nil && !s.TimedOut {
			wr.checker.problem(fmt.Sprintf("%s: %v", s.Config, err))
		}
	}
}

// serverRound starts the server and puts the same load on it three times:
// before patchprof attaches, attached (patchprof started with -p, the load
// started once it says it attached, then SIGINT: the detach), and after
// the detach. It checks that the handler's count in the saved profile is
// the requests made while attached, that the detach left no tracer and
// the code as its files have it, and that the server answered every
// request. The rates are added to s only when the round went through.
func (b *bench) serverRound(wr *workloadRun, s *serverSlot) error {
	dir := filepath.Join(b.tmp, wr.w.Name, "run-"+s.Config)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	srv, err := startServer(wr.t.Plain, b.opts.Timeout)
	if err != nil {
		return err
	}
	defer srv.kill()
	r := &round{srv: srv, slot: s, opts: b.opts}
	n := b.opts.ServerRequests
	// A warm-up, not measured: the server's first connections and pages.
	if _, err := r.load("warming up", max(n/10, b.opts.ServerConns)); err != nil {
		return err
	}
	codeLines, code, err := procCode(srv.pid())
	if err != nil {
		return err
	}
	before, err := r.load("before the attach", n)
	if err != nil {
		return err
	}
	attached, err := b.attachedPhase(wr, r, dir, n)
	if err != nil {
		return err
	}
	if err := checkDetached(srv.pid(), codeLines, code); err != nil {
		return err
	}
	after, err := r.load("after the detach", n)
	if err != nil {
		return err
	}
	if err := srv.finish(r.made, b.opts.Timeout); err != nil {
		return err
	}
	s.Before = append(s.Before, before.RPS())
	s.Attached = append(s.Attached, attached.RPS())
	s.After = append(s.After, after.RPS())
	return nil
}

// A round is one server round: the server, and the requests made to it so
// far, which it must count at its end.
type round struct {
	srv  *server
	slot *serverSlot
	opts *Options
	made int
}

// load makes n requests to the server, within the timeout (past it the
// slot is marked timed out).
func (r *round) load(what string, n int) (LoadResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
	defer cancel()
	l := Load{Addr: r.srv.addr, Conns: r.opts.ServerConns, Requests: n, Body: serverBody}
	res, err := l.run(ctx)
	r.made += res.Done
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.slot.TimedOut = true
	}
	if err != nil {
		return res, fmt.Errorf("load %s: %d of %d requests answered: %w", what, res.Done, n, err)
	}
	return res, nil
}

// attachedPhase attaches patchprof to the server, makes n requests once it
// says it attached, detaches it, and checks that its saved profile counted
// the handler once per request.
func (b *bench) attachedPhase(wr *workloadRun, r *round, dir string, n int) (LoadResult, error) {
	pp, err := b.attach(wr, r.slot.Config, dir, r.srv.pid())
	if err != nil {
		return LoadResult{}, err
	}
	attached, loadErr := r.load("attached", n)
	if err := errors.Join(loadErr, pp.detach(b.opts.Timeout)); err != nil {
		return attached, err
	}
	return attached, checkHandler(filepath.Join(dir, "profile.json"), wr.w.Handler, attached.Done)
}

// checkHandler checks that the saved profile counted the handler exactly
// want times.
func checkHandler(save, handler string, want int) error {
	p, err := profile.Load(save)
	if err != nil {
		return fmt.Errorf("loading the saved profile: %w", err)
	}
	var got uint64
	found := false
	for _, f := range p.Functions {
		if f.Name == handler {
			got += f.Count
			found = true
		}
	}
	if !found || got != uint64(want) {
		return fmt.Errorf("COUNT WRONG: %s counted %d times (found %v), %d requests made while attached", handler, got, found, want)
	}
	return nil
}

// checkDetached checks that a detach left the server as it was: no tracer,
// the same executable mappings, the code of its files.
func checkDetached(pid int, codeLines []string, code []Mapping) error {
	tracer, err := tracerPID(pid)
	if err != nil {
		return err
	}
	if tracer != "0" {
		return fmt.Errorf("TRACER LEFT: TracerPid %s after the detach", tracer)
	}
	after, _, err := procCode(pid)
	if err != nil {
		return err
	}
	if !slices.Equal(after, codeLines) {
		return fmt.Errorf("MAPPINGS CHANGED across attach and detach:\nbefore:\n%s\nafter:\n%s",
			strings.Join(codeLines, "\n"), strings.Join(after, "\n"))
	}
	if err := codeAsFiles(pid, code); err != nil {
		return fmt.Errorf("CODE LEFT PATCHED after the detach: %w", err)
	}
	return nil
}

// A server is a started server program.
type server struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	addr string
	// ended is set once the server was waited for.
	ended bool
}

// startServer starts a server and reads its "listening PORT" line.
func startServer(exe string, timeout time.Duration) (*server, error) {
	cmd := exec.Command(exe)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	line, err := s.line(timeout)
	port, perr := strconv.Atoi(strings.TrimPrefix(line, "listening "))
	if err != nil || perr != nil || !strings.HasPrefix(line, "listening ") {
		s.kill()
		return nil, fmt.Errorf("server %s printed %q, want \"listening PORT\": %w", exe, line, errors.Join(err, perr))
	}
	s.addr = fmt.Sprintf("127.0.0.1:%d", port)
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// line reads the server's next line of output, within the timeout.
func (s *server) line(timeout time.Duration) (string, error) {
	got := make(chan bool, 1)
	go func() { got <- s.out.Scan() }()
	select {
	case ok := <-got:
		if !ok {
			return "", fmt.Errorf("the server's output ended: %w", errors.Join(s.out.Err(), io.ErrUnexpectedEOF))
		}
		return s.out.Text(), nil
	case <-time.After(timeout):
		s.kill()
		return "", fmt.Errorf("no line from the server in %v", timeout)
	}
}

// finish closes the server's standard input, reads its "served N" line,
// checks that N is the requests made, and waits for it to exit 0.
func (s *server) finish(made int, timeout time.Duration) error {
	s.in.Close()
	line, err := s.line(timeout)
	if err != nil {
		return err
	}
	if line != fmt.Sprintf("served %d", made) {
		return fmt.Errorf("SERVER MISCOUNTED: it printed %q at its end, %d requests made", line, made)
	}
	s.ended = true
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("the server after the detach: %w (want exit 0)", err)
	}
	return nil
}

// kill ends the server and its process group, unless it ended already.
func (s *server) kill() {
	if s.ended {
		return
	}
	s.ended = true
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
}

// An attachedRun is patchprof attached to a server.
type attachedRun struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	// stderr is what patchprof wrote to its standard error.
	stderr strings.Builder
	eof    chan struct{}
}

// attachedLine is how patchprof says it attached and counts (cmd/patchprof,
// run): the load starts after it.
const attachedLine = "patchprof: attached to PID "

// attach starts patchprof with engine on process pid (-p), its report and
// saved profile in dir, and waits until it says it attached.
func (b *bench) attach(wr *workloadRun, engine, dir string, pid int) (*attachedRun, error) {
	args := append(engineFlags(engine), wr.w.Mode...)
	args = append(args, b.opts.PatchprofFlags...)
	args = append(args, "-o", filepath.Join(dir, "report.txt"), "--save", filepath.Join(dir, "profile.json"), "-p", strconv.Itoa(pid))
	a := &attachedRun{cmd: exec.Command(b.patchprof, args...), eof: make(chan struct{})}
	a.cmd.Dir = dir
	a.cmd.Env = append(os.Environ(), b.cacheEnv(wr, engine, dir))
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := a.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := a.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	go func() {
		defer close(a.eof)
		sc := bufio.NewScanner(pipe)
		said := false
		for sc.Scan() {
			a.mu.Lock()
			a.stderr.WriteString(sc.Text() + "\n")
			a.mu.Unlock()
			if !said && strings.HasPrefix(sc.Text(), attachedLine) {
				said = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
		return a, nil
	case <-a.eof:
		err = fmt.Errorf("patchprof ended before it attached: %w", a.cmd.Wait())
	case <-time.After(b.opts.Timeout):
		syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
		<-a.eof
		a.cmd.Wait()
		err = fmt.Errorf("patchprof did not say it attached in %v", b.opts.Timeout)
	}
	return nil, fmt.Errorf("%w\n%s", err, tail([]byte(a.output())))
}

// output is what patchprof wrote to its standard error so far.
func (a *attachedRun) output() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stderr.String()
}

// detach sends patchprof SIGINT, which restores the code and detaches, and
// waits for it to write its report and exit 0.
func (a *attachedRun) detach(timeout time.Duration) error {
	if err := a.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return err
	}
	select {
	case <-a.eof:
	case <-time.After(timeout):
		// Killing patchprof leaves the server traced, and dead with it
		// (PTRACE_O_EXITKILL): the round is lost.
		syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
		<-a.eof
		a.cmd.Wait()
		return fmt.Errorf("patchprof did not detach in %v after SIGINT\n%s", timeout, tail([]byte(a.output())))
	}
	if err := a.cmd.Wait(); err != nil {
		return fmt.Errorf("patchprof attached: %w (want exit 0)\n%s", err, tail([]byte(a.output())))
	}
	return nil
}
