package breakpoint

import (
	"testing"

	"github.com/patchprof/patchprof/cfg"
)

// TestHostLanding: a short site lands at the first 5 bytes of its host
// block past the host's own jmp and the landings it holds, within a jmp
// rel8 of the site; a block too short or too far hosts none.
func TestHostLanding(t *testing.T) {
	for _, c := range []struct {
		name       string
		start, end uint64
		site       uint64
		taken      []uint64
		want       uint64
		ok         bool
	}{
		{"the block right before", 0x1000, 0x1010, 0x1010, nil, 0x1005, true},
		{"a long block before: its tail", 0x1000, 0x1100, 0x1100, nil, 0x1100 + 2 - 128, true},
		{"a long block before, one landing taken", 0x1000, 0x1100, 0x1104, []uint64{0x1106 - 128 - 0x1000}, 0x1106 - 128 + 5, true},
		{"two landings taken at the start", 0x1000, 0x1020, 0x1020, []uint64{5, 10}, 0x100f, true},
		{"full", 0x1000, 0x1013, 0x1013, []uint64{5, 10}, 0, false},
		{"too short to host", 0x1000, 0x1009, 0x1009, nil, 0, false},
		{"out of reach behind", 0x1000, 0x1010, 0x1010 + 200, nil, 0, false},
		{"a block after, in reach", 0x1070, 0x1080, 0x1000, nil, 0x1075, true},
		{"a block after, out of reach", 0x1100, 0x1110, 0x1000, nil, 0, false},
	} {
		got, ok := hostLanding(cfg.Block{Start: c.start, End: c.end}, c.site, c.taken)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: hostLanding = %#x, %v; want %#x, %v", c.name, got, ok, c.want, c.ok)
		}
		if ok {
			if d := int64(got) - int64(c.site+2); d < -128 || d > 127 {
				t.Errorf("%s: landing %#x out of a jmp rel8's reach of %#x", c.name, got, c.site)
			}
			if got < c.start+5 || got+5 > c.end {
				t.Errorf("%s: landing %#x outside the host's dead bytes [%#x, %#x)", c.name, got, c.start+5, c.end)
			}
		}
	}
}
