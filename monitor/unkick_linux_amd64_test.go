package monitor

import "testing"

func TestPendingUnblocked(t *testing.T) {
	const head = "Name:\tx\nState:\tS (sleeping)\n"
	for _, c := range []struct {
		status string
		want   bool
	}{
		{head + "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n", false},
		{head + "SigPnd:\t0000000000000200\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n", true},
		{head + "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000200\nSigBlk:\t0000000000000200\n", false},
		{head + "SigPnd:\t0000000000000000\nShdPnd:\t0000000000004200\nSigBlk:\t0000000000000200\n", true},
		{head + "SigPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n", true}, // no ShdPnd: cannot tell
		{head + "SigPnd:\tzz\nShdPnd:\t0\nSigBlk:\t0\n", true},
	} {
		if got := pendingUnblocked(c.status); got != c.want {
			t.Errorf("pendingUnblocked(%q) = %v, want %v", c.status, got, c.want)
		}
	}
}
