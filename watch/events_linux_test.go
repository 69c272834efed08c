package watch

import (
	"encoding/binary"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// procEventMsg is one netlink message of the process events connector:
// the event what with its data words (struct proc_event's union) after
// cpu and timestamp.
func procEventMsg(what uint32, data ...uint32) []byte {
	le := binary.LittleEndian
	ev := make([]byte, 16, 16+4*len(data))
	le.PutUint32(ev, what)
	for _, d := range data {
		ev = le.AppendUint32(ev, d)
	}
	m := make([]byte, 16+20, 16+20+len(ev))
	m = append(m, ev...)
	le.PutUint32(m, uint32(len(m)))
	return m
}

// TestNewProcs reads the processes made and exec'ed from the kernel's
// messages: a thread's fork and an exit name none, a short message is
// left alone.
func TestNewProcs(t *testing.T) {
	var b []byte
	b = append(b, procEventMsg(procEventFork, 1, 1, 4242, 4242)...)    // a process, by init
	b = append(b, procEventMsg(procEventFork, 10, 10, 4243, 10)...)    // a thread
	b = append(b, procEventMsg(procEventExec, 77, 77, 0, 0)...)        // an exec
	b = append(b, procEventMsg(0x80000000, 4242, 4242, 0, 0, 1, 1)...) // an exit
	want := []procEvent{{PID: 4242, Parent: 1, Fork: true}, {PID: 77}}
	if got := newProcs(b); !slices.Equal(got, want) {
		t.Errorf("newProcs = %v, want %v", got, want)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, procEventMsg(procEventExec)[:30], {0xff, 0xff, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}} {
		if got := newProcs(bad); len(got) != 0 {
			t.Errorf("newProcs(%x) = %v, want none", bad, got)
		}
	}
}

// TestEventFilter joins the connector (where permitted) and starts a
// process: the kernel keeps only processes' forks, and execs if asked,
// so every message read names one; the thread's fork and the exits the
// program makes are dropped before they wake the reader.
func TestEventFilter(t *testing.T) {
	for _, execs := range []bool{false, true} {
		ev, err := openProcEvents(execs)
		if err != nil {
			t.Skipf("no process events here (%v): needs CAP_NET_ADMIN", err)
		}
		cmd := exec.Command("/bin/sh", "-c", "true")
		if err := cmd.Run(); err != nil {
			ev.Close()
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		var forked, execed bool
		buf := make([]byte, 8192)
		ev.f.SetReadDeadline(time.Now().Add(10 * time.Second))
		for !forked || execs && !execed {
			n, err := ev.f.Read(buf)
			if err != nil {
				t.Fatalf("execs %v: the fork of PID %d (and its exec) not read: %v", execs, pid, err)
			}
			evs := newProcs(buf[:n])
			if len(evs) != 1 {
				t.Fatalf("execs %v: a message the filter kept names %v, want one process", execs, evs)
			}
			e := evs[0]
			if !e.Fork && !execs {
				t.Errorf("execs false: the exec of PID %d kept", e.PID)
			}
			forked = forked || e.Fork && e.PID == pid
			execed = execed || !e.Fork && e.PID == pid
		}
		ev.Close()
	}
}

// TestExecedSince: a record whose patchprof ended without attaching is
// watched anew only when its process runs another file than when found.
func TestExecedSince(t *testing.T) {
	self := exeOf(os.Getpid())
	if self == (fileID{}) {
		t.Fatal("exeOf of this process is empty")
	}
	now := time.Now()
	for _, tc := range []struct {
		name string
		r    Record
		want bool
	}{
		{"still watched", Record{Proc: Proc{PID: os.Getpid()}, exe: fileID{1, 1}}, false},
		{"attached, then ended", Record{Proc: Proc{PID: os.Getpid()}, Attached: now, Ended: now, exe: fileID{1, 1}}, false},
		{"refused, the same file", Record{Proc: Proc{PID: os.Getpid()}, Ended: now, exe: self}, false},
		{"refused, file unknown", Record{Proc: Proc{PID: os.Getpid()}, Ended: now}, false},
		{"refused, another file now", Record{Proc: Proc{PID: os.Getpid()}, Ended: now, exe: fileID{1, 1}}, true},
	} {
		if got := execedSince(&tc.r); got != tc.want {
			t.Errorf("%s: execedSince = %v, want %v", tc.name, got, tc.want)
		}
	}
}
