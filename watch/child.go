package watch

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/patchprof/patchprof/profile"
)

// attachedPrefix starts the line a patchprof -p writes once it has
// attached and counts (cmd/patchprof's run).
const attachedPrefix = "patchprof: attached to PID "

// A child is the patchprof attached to one watched process.
type child struct {
	cmd  *exec.Cmd
	file string // where it saves the process's profile
	// snapFile is the file's identity when a snapshot was asked: the
	// child has answered once it differs (the save replaces the file).
	snapFile os.FileInfo
	ended    chan struct{}
}

// start starts the child patchprof of r's process. Preconditions: w.mu
// held.
func (w *Watcher) start(r *Record) (*child, error) {
	pid := strconv.Itoa(r.Proc.PID)
	base := filepath.Join(w.dir, fmt.Sprintf("%d-%d", r.Proc.PID, r.Proc.Start))
	args := append([]string{}, w.opt.Args...)
	args = append(args, "--save", base+".json", "-o", base+".txt")
	args = append(args, "-p", pid)
	c := &child{cmd: exec.Command(w.opt.Patchprof, args...), file: base + ".json", ended: make(chan struct{})}
	c.cmd.SysProcAttr = childAttrs()
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("watch: start %s: %w", w.opt.Patchprof, err)
	}
	w.wg.Add(1)
	go w.follow(r, c, bufio.NewScanner(stderr))
	return c, nil
}

// follow reads the child's messages until it ends, then records the
// process's final profile and lets the record go.
func (w *Watcher) follow(r *Record, c *child, sc *bufio.Scanner) {
	defer w.wg.Done()
	defer close(c.ended)
	var last string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, attachedPrefix) {
			now := time.Now()
			w.mu.Lock()
			r.Attached = now
			w.attaches++
			w.mu.Unlock()
			w.logf("attached to PID %d at %s (counted from now)", r.Proc.PID, stamp(now))
			continue
		}
		if msg, ok := strings.CutPrefix(line, "patchprof: "); ok {
			last = msg
			w.logf("PID %d: %s", r.Proc.PID, msg)
		}
	}
	err := c.cmd.Wait()
	p := c.load()
	w.mu.Lock()
	r.Ended = time.Now()
	if p != nil {
		r.Profile = p
	}
	delete(w.kids, r)
	attached := !r.Attached.IsZero()
	if !attached {
		r.Refused = last
		if r.Refused == "" {
			r.Refused = fmt.Sprintf("patchprof -p ended: %v", err)
		}
		w.failures[Reason(r.Refused)]++
	}
	w.mu.Unlock()
	switch {
	case !attached:
		w.logf("PID %d not watched: %s", r.Proc.PID, r.Refused)
	case p == nil:
		w.logf("let go of PID %d; its profile was not saved (%v)", r.Proc.PID, err)
	case p.Exit.Detached:
		w.logf("detached from PID %d, which runs on; its counts kept", r.Proc.PID)
	default:
		w.logf("PID %d ended; its counts kept", r.Proc.PID)
	}
}

// load reads the child's latest saved profile (nil before the first).
func (c *child) load() *profile.Profile {
	p, err := profile.Load(c.file)
	if err != nil {
		return nil
	}
	return p
}

// terminate asks the child to detach and save: its SIGTERM, as an
// operator's, ends an attached profile.
func (c *child) terminate() {
	if c.cmd.Process != nil {
		c.cmd.Process.Signal(termSignal)
	}
}

// askSnapshot asks the child for a profile of the moment (its SIGUSR1);
// it returns false when the child cannot be asked.
func (c *child) askSnapshot() bool {
	c.snapFile, _ = os.Stat(c.file)
	return c.cmd.Process.Signal(snapshotSignal) == nil
}

// snapshotWait bounds the wait for a child's answer: one whose target is
// stopped for long (a debugger's, job control) is not waited for.
const snapshotWait = 10 * time.Second

// waitSnapshot waits until the child has replaced its saved profile since
// askSnapshot, or has ended.
func (c *child) waitSnapshot() {
	deadline := time.Now().Add(snapshotWait)
	for time.Now().Before(deadline) {
		if st, err := os.Stat(c.file); err == nil && (c.snapFile == nil || !os.SameFile(st, c.snapFile)) {
			return
		}
		select {
		case <-c.ended:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// The reasons of refusals, the label of patchprof_attach_failures_total:
// few, so that the series stay few.
const (
	ReasonMaxProcs      = "max_procs"      // --max-procs processes were watched already
	ReasonAlreadyTraced = "already_traced" // a debugger or another tracer has it
	ReasonNotPermitted  = "not_permitted"  // ptrace refused (another user's, Yama)
	ReasonGone          = "gone"           // it exited before the attach
	ReasonOther         = "other"
)

// Reason classifies a child's refusal message (monitor's attach errors).
func Reason(msg string) string {
	switch {
	case strings.Contains(msg, "already traced"):
		return ReasonAlreadyTraced
	case strings.Contains(msg, "not permitted"):
		return ReasonNotPermitted
	case strings.Contains(msg, "no such process"), strings.Contains(msg, "zombie"), strings.Contains(msg, "still running?"):
		return ReasonGone
	}
	return ReasonOther
}
