//go:build linux

package integration

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// handlerCount reads "hot N handler M" from the signals target's stdout.
func handlerCount(t *testing.T, stdout string) (hot, handler int64) {
	t.Helper()
	if _, err := fmt.Sscanf(stdout, "hot %d handler %d", &hot, &handler); err != nil {
		t.Fatalf("target's stdout %q: want \"hot N handler M\": %v", stdout, err)
	}
	return hot, handler
}

// TestSignalsTimer delivers SIGALRM every millisecond while a hot function
// runs at least 50000 times (on until 3 signals came): the handler's count
// must equal the program's own count of its runs, and the hot function's
// count the program's own.
func TestSignalsTimer(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "signals.c", "-g", "-O0")
	t.Run("funcs", func(t *testing.T) {
		res, p := runProfile(t, runOpts{args: []string{"--funcs", exe, "timer"}})
		wantExitCode(t, res, p, 0)
		hot, handled := handlerCount(t, res.stdout)
		if hot < 50000 {
			t.Errorf("the program counted %d calls of hot, want at least 50000", hot)
		}
		if handled < 3 {
			t.Errorf("%d SIGALRM arrived while hot ran under patchprof, want 3: the test proves nothing", handled)
		}
		t.Logf("%d signals handled", handled)
		wantFunc(t, p, "hot", hot)
		wantFunc(t, p, "handler", handled)
	})
	t.Run("lines", func(t *testing.T) {
		res, p := runProfile(t, runOpts{args: []string{"--lines", "--func", "^(hot|handler)$", exe, "timer"}})
		wantExitCode(t, res, p, 0)
		hot, handled := handlerCount(t, res.stdout)
		wantLine(t, p, "signals.c", markerLine(t, "signals.c", "HOT_BODY"), hot)
		wantLine(t, p, "signals.c", markerLine(t, "signals.c", "HANDLER_BODY"), handled)
	})
}

// TestSignalsTrapHandled checks that a SIGTRAP of the program's own reaches
// its handler, whether it comes from raise or from an int3 instruction that
// patchprof did not plant.
func TestSignalsTrapHandled(t *testing.T) {
	needs(t)
	exe := buildC(t, "signals.c", "-g", "-O0")
	for _, how := range []string{"trap", "int3"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			res, p := runProfile(t, runOpts{args: []string{"--lines", "--funcs", exe, how}})
			wantExitCode(t, res, p, 0)
			if res.stdout != "caught SIGTRAP\n" {
				t.Errorf("target's stdout %q, want \"caught SIGTRAP\\n\"", res.stdout)
			}
			wantFunc(t, p, "traphandler", 1)
		})
	}
}

// TestSignalsTrapKills checks that a SIGTRAP with no handler kills the
// program under patchprof as it would without: exit 128+5.
func TestSignalsTrapKills(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "signals.c", "-g", "-O0")
	out := filepath.Join(t.TempDir(), "report.txt")
	res, p := runProfile(t, runOpts{args: []string{"--lines", "-o", out, exe, "trapdie"}})
	if res.code != 133 {
		t.Errorf("%s: exit code %d, want 133 (killed by SIGTRAP)\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	if strings.Contains(res.stdout, "survived") {
		t.Errorf("the program survived its SIGTRAP: stdout %q", res.stdout)
	}
	if p.Exit.Signal != "SIGTRAP" || p.Exit.Code != nil {
		t.Errorf("saved exit: %v; want signal SIGTRAP and no code", p.Exit)
	}
	header, _, _ := strings.Cut(readFile(t, out), "\n")
	if !regexp.MustCompile(`^patchprof: \S+ killed by SIGTRAP\b`).MatchString(header) {
		t.Errorf("header %q, want `patchprof: PROG killed by SIGTRAP ...`", header)
	}
}

// TestSignalsStop checks job control: the program stops itself with
// SIGSTOP and stays stopped until the test sends SIGCONT, 500 ms after it
// said it was stopping; then it carries on and exits 0 with exact counts.
func TestSignalsStop(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "signals.c", "-g", "-O0")
	const hold = 500 * time.Millisecond
	done := make(chan struct{})
	started := func(pid int, stdout func() string) {
		go func() {
			for !strings.Contains(stdout(), "stopping\n") {
				select {
				case <-done:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
			select {
			case <-done:
				return
			case <-time.After(hold):
			}
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				// SIGCONT to a running process does nothing: send it
				// until the run ends, in case the first one came before
				// the stop.
				for _, kid := range childrenOf(pid) {
					_ = syscall.Kill(kid, syscall.SIGCONT)
				}
				select {
				case <-done:
					return
				case <-tick.C:
				}
			}
		}()
	}
	res, p := runProfile(t, runOpts{args: []string{"--funcs", exe, "stop"}, started: started})
	close(done)
	wantExitCode(t, res, p, 0)
	var ms int64
	if _, err := fmt.Sscanf(res.stdout, "stopping\nstopped %d ms\n", &ms); err != nil || !strings.HasSuffix(res.stdout, "continued\n") {
		t.Fatalf("target's stdout %q, want \"stopping\\nstopped N ms\\ncontinued\\n\"", res.stdout)
	}
	if ms < (hold - 100*time.Millisecond).Milliseconds() {
		t.Errorf("the program stayed stopped %d ms; the test sent SIGCONT only after %v: SIGSTOP did not stop it", ms, hold)
	}
	wantFunc(t, p, "f", 200)
}
