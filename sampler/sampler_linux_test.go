//go:build linux

package sampler

import (
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSampleChild samples a shell spinning in a loop, and the process it
// forks after the events are open (inherited).
func TestSampleChild(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 0.1; sh -c 'while :; do :; done' & while :; do :; done")
	// Its own process group, so that the test ends the shell and its child.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var mu sync.Mutex
	pids := map[uint32]int{}
	s, err := Open([]int{cmd.Process.Pid}, Config{Rate: 1000, Deliver: func(b []Sample) {
		mu.Lock()
		defer mu.Unlock()
		for _, x := range b {
			pids[x.PID]++
			if x.IP == 0 || x.Time == 0 {
				t.Errorf("sample %+v: no IP or time", x)
			}
		}
	}})
	var ue *UnavailableError
	if errors.As(err, &ue) {
		t.Skipf("perf events refused here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	st, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, n := range pids {
		total += n
	}
	// Two spinning processes for about half a second on at most two CPUs.
	if total < 200 || len(pids) < 2 {
		t.Errorf("%d samples from %d processes (%v), lost %d; want hundreds from 2", total, len(pids), pids, st.Lost)
	}
}
