package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/patchprof/patchprof/profile"
)

// How long an attach stops a process (issue 28: "stopped only to plant,
// for at most 10 ms per 10,000 sites planted"). The program runs on its
// own; patchprof attaches with -p under the in-process engine, the
// program runs a full iteration attached, and patchprof detaches. The
// stop is patchprof's own measure, the engine note of the saved profile
// (monitor Result.AttachPause): from the first thread seized to the last
// released, the analysis of the files done before it.

// A pauseSlot is the pause workload's measure, a value a round.
type pauseSlot struct {
	Pause []float64 // milliseconds
	Sites []float64 // sites planted
	Quiet int       // rounds that attached without system-call stops
}

// pauseNote and sitesLine are how patchprof says the two.
var (
	pauseNote = regexp.MustCompile(`stopped ([0-9.]+) ms for the attach`)
	sitesLine = regexp.MustCompile(`attached to PID [0-9]+, ([0-9]+) sites planted`)
)

// runPause runs one round of the pause workload.
func (b *bench) runPause(wr *workloadRun, rep int) {
	if wr.pause == nil {
		wr.pause = &pauseSlot{}
	}
	if err := b.pauseRound(wr, rep); err != nil {
		wr.checker.problems = append(wr.checker.problems, fmt.Sprintf("attach round %d: %v", rep, err))
	}
}

// pauseRound starts the looping program, waits for its first iteration,
// attaches, waits for an iteration made attached, detaches, checks the
// program runs on, and reads the stop from the saved profile.
func (b *bench) pauseRound(wr *workloadRun, rep int) error {
	dir := filepath.Join(b.tmp, wr.w.Name, fmt.Sprintf("run-pause-%d", rep))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(wr.t.Plain)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, out)
	}()
	next := func(what string) error {
		select {
		case _, ok := <-lines:
			if !ok {
				return fmt.Errorf("the program ended %s", what)
			}
			return nil
		case <-time.After(b.opts.Timeout):
			return fmt.Errorf("the program printed nothing %s in %v", what, b.opts.Timeout)
		}
	}
	if err := next("before the attach"); err != nil {
		return err
	}
	a, err := b.attach(wr, cfgJump, dir, cmd.Process.Pid)
	if err != nil {
		return err
	}
	// An iteration begun after the attach: two lines.
	err = next("while attached")
	if err == nil {
		err = next("while attached")
	}
	if derr := a.detach(b.opts.Timeout); derr != nil || err != nil {
		return errors.Join(err, derr)
	}
	if err := next("after the detach"); err != nil {
		return err
	}
	p, err := profile.Load(filepath.Join(dir, "profile.json"))
	if err != nil {
		return fmt.Errorf("loading the saved profile: %w", err)
	}
	pause := -1.0
	for _, n := range p.Notes {
		if m := pauseNote.FindStringSubmatch(n); m != nil {
			pause, _ = strconv.ParseFloat(m[1], 64)
		}
		if strings.Contains(n, "attached without system-call stops") {
			wr.pause.Quiet++
		}
	}
	m := sitesLine.FindStringSubmatch(a.output())
	if pause < 0 || m == nil {
		return fmt.Errorf("patchprof said no stop or no sites:\n%s", tail([]byte(a.output())))
	}
	sites, _ := strconv.ParseFloat(m[1], 64)
	wr.pause.Pause = append(wr.pause.Pause, pause)
	wr.pause.Sites = append(wr.pause.Sites, sites)
	return nil
}

// writePauseTable prints the pause workload's table.
func (b *bench) writePauseTable(w io.Writer, wr *workloadRun) {
	s := wr.pause
	if s == nil || len(s.Pause) == 0 {
		return
	}
	med := medianRate(s.Pause)
	sites := medianRate(s.Sites)
	fmt.Fprintf(w, "%s: median of %d rounds\n\n", wr.w.Title, len(s.Pause))
	fmt.Fprintf(w, "| sites planted | stopped | per 10,000 sites | goal per 10,000 sites | rounds without system-call stops |\n")
	fmt.Fprintf(w, "| ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Fprintf(w, "| %.0f | %.1f ms | %.1f ms | 10 ms | %d of %d |\n\n", sites, med, med*10000/max(sites, 1), s.Quiet, len(s.Pause))
}

// pauseVerdict says in one line what the rounds checked; ok is false when
// a round went wrong.
func (b *bench) pauseVerdict(wr *workloadRun) (text string, ok bool) {
	var sb strings.Builder
	if wr.pause != nil && len(wr.pause.Pause) > 0 {
		fmt.Fprintf(&sb, "%s: %d rounds attached, ran attached and ran on after the detach\n", wr.w.Name, len(wr.pause.Pause))
	}
	for _, p := range wr.checker.problems {
		fmt.Fprintf(&sb, "%s: RUN FAILED OR MISBEHAVED: %s\n", wr.w.Name, strings.ReplaceAll(strings.TrimSpace(p), "\n", "\n    "))
	}
	return sb.String(), len(wr.checker.problems) == 0
}
