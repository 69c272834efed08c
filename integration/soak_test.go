//go:build linux

package integration

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// soakDuration is how long TestSoak runs its target: 30s by default,
// PATCHPROF_SOAK (a Go duration, e.g. 5m) for the long version.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("PATCHPROF_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("PATCHPROF_SOAK=%q: %v", v, err)
		}
		return d
	}
	return 30 * time.Second
}

// rssKiB reads a process's resident set size from /proc/PID/status.
func rssKiB(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// TestSoak runs a target that calls one function as fast as it can, for
// hundreds of thousands of hits, and samples patchprof's resident memory
// every half second: after the first quarter of the run (start-up, planting,
// the Go runtime's first collections) it must not grow, because the hit path
// allocates nothing. The count must equal the target's own.
func TestSoak(t *testing.T) {
	needs(t)
	t.Parallel()
	d := soakDuration(t)
	exe := buildC(t, "soak.c", "-g", "-O0")
	var (
		mu      sync.Mutex
		samples []int64
	)
	done := make(chan struct{})
	res, p := runProfile(t, runOpts{
		args:    []string{"--funcs", "--func", "^tick$", exe, strconv.FormatFloat(d.Seconds(), 'f', -1, 64)},
		timeout: d + 2*time.Minute,
		started: func(pid int, _ func() string) {
			go func() {
				tk := time.NewTicker(500 * time.Millisecond)
				defer tk.Stop()
				for {
					select {
					case <-done:
						return
					case <-tk.C:
						if kb, ok := rssKiB(pid); ok {
							mu.Lock()
							samples = append(samples, kb)
							mu.Unlock()
						}
					}
				}
			}()
		},
	})
	close(done)
	wantExitCode(t, res, p, 0)
	var ticks int64
	if _, err := fmt.Sscanf(res.stdout, "ticks %d", &ticks); err != nil {
		t.Fatalf("target printed %q", res.stdout)
	}
	wantFunc(t, p, "tick", ticks)
	mu.Lock()
	defer mu.Unlock()
	// The last sample may be taken while the report is built.
	if len(samples) > 2 {
		samples = samples[:len(samples)-1]
	}
	if len(samples) < 8 {
		t.Fatalf("only %d memory samples in %v", len(samples), d)
	}
	base := samples[len(samples)/4]
	peak := base
	for _, s := range samples[len(samples)/4:] {
		peak = max(peak, s)
	}
	// 1 MiB of slack for the Go runtime's own bookkeeping (and page
	// accounting); a per-hit allocation of even 8 bytes would add several
	// megabytes over this many hits.
	t.Logf("%d hits; patchprof RSS after the first quarter %d KiB, peak after %d KiB (%d samples)", ticks, base, peak, len(samples))
	if peak-base > 1024 {
		t.Errorf("patchprof's memory grew from %d KiB to %d KiB over %d hits: samples %v", base, peak, ticks, samples)
	}
}
