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
	// Wait until both processes have been sampled (a loaded machine gives
	// them little CPU): no timing is asserted.
	enough := func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range pids {
			if c >= 10 {
				n++
			}
		}
		return n >= 2
	}
	for deadline := time.Now().Add(2 * time.Minute); !enough() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	st, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !enough() {
		mu.Lock()
		defer mu.Unlock()
		t.Errorf("samples by process %v, lost %d; want 10 or more from each of 2 (the shell and its child)", pids, st.Lost)
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string]int{"0": 1, "0-3": 4, "0-1,4,6-7": 5} {
		got, err := parseCPUList(in)
		if err != nil || len(got) != want {
			t.Errorf("parseCPUList(%q) = %v, %v; want %d CPUs", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "3-1", "0-"} {
		if _, err := parseCPUList(in); err == nil {
			t.Errorf("parseCPUList(%q): no error", in)
		}
	}
}
