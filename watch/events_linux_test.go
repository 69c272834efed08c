package watch

import (
	"encoding/binary"
	"slices"
	"testing"
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
	b = append(b, procEventMsg(procEventFork, 1, 1, 4242, 4242)...)    // a process
	b = append(b, procEventMsg(procEventFork, 10, 10, 4243, 10)...)    // a thread
	b = append(b, procEventMsg(procEventExec, 77, 77, 0, 0)...)        // an exec
	b = append(b, procEventMsg(0x80000000, 4242, 4242, 0, 0, 1, 1)...) // an exit
	if got := newProcs(b); !slices.Equal(got, []int{4242, 77}) {
		t.Errorf("newProcs = %v, want [4242 77]", got)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, procEventMsg(procEventExec)[:30], {0xff, 0xff, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}} {
		if got := newProcs(bad); len(got) != 0 {
			t.Errorf("newProcs(%x) = %v, want none", bad, got)
		}
	}
}
