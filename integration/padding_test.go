//go:build linux

package integration

import (
	"strings"
	"testing"
)

// TestBlocksNoPaddingNote: --blocks on a plain gcc program notes no
// anomaly. Its _init (crti.o + crtn.o, no st_size) ends with .init's zero
// fill before the symbol-less .plt; it was taken for "unreached bytes that
// are not padding (data in text?)" in the listing, the HTML page and pprof.
// Real anomalies are still noted (TestBlocksBadCode).
func TestBlocksNoPaddingNote(t *testing.T) {
	needs(t)
	t.Parallel()
	for _, flags := range [][]string{{"-g", "-O0"}, {"-g", "-O2"}, {"-g", "-O2", "-no-pie"}} {
		exe := buildC(t, "calls.c", flags...)
		res, p := runBlocks(t, exe)
		if res.code != 0 || strings.Contains(res.stderr, "data in text") {
			t.Fatalf("%v: exit code %d, or a note of data in text\n%s", flags, res.code, res)
		}
		for _, n := range p.Notes {
			if strings.Contains(n, "no block counts") {
				t.Errorf("%v: note %q", flags, n)
			}
		}
		for _, f := range p.Functions {
			if f.Name == "_init" && f.Blocks == 0 {
				t.Errorf("%v: _init has no block counts", flags)
			}
		}
	}
}
