//go:build linux && amd64

package monitor

import "testing"

// TestParseSchedstat checks the reader of /proc/TID/schedstat on the lines
// the kernel writes and on what it never writes.
func TestParseSchedstat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want sched
		ok   bool
	}{
		{"5073726 1081906 12\n", sched{5073726, 1081906, 12}, true},
		{"0 0 0\n", sched{}, true},
		{"18446744073709551615 1 2\n", sched{1<<64 - 1, 1, 2}, true},
		{"18446744073709551616 1 2\n", sched{}, false}, // overflows
		{"5073726 1081906\n", sched{}, false},
		{"", sched{}, false},
		{"x 1 2\n", sched{}, false},
	} {
		got, ok := parseSchedstat([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("parseSchedstat(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestStatRunning checks the state field of /proc/TID/stat lines, whose
// command name may hold spaces and parentheses.
func TestStatRunning(t *testing.T) {
	for in, want := range map[string]bool{
		"1234 (costs) R 1 2 3":    true,
		"1234 (costs) S 1 2 3":    false,
		"1234 (a) R (b)) S 1 2 3": false,
		"1234 (a) S (b)) R 1 2 3": true,
		"1234 (costs":             false,
		"1234 (costs)":            false,
	} {
		if got := statRunning([]byte(in)); got != want {
			t.Errorf("statRunning(%q) = %v, want %v", in, got, want)
		}
	}
}
