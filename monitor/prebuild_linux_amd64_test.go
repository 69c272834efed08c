//go:build linux && amd64

package monitor

import (
	"testing"

	"github.com/patchprof/patchprof/breakpoint/jump"
)

// TestFreeNear checks the prediction buildAhead makes of mapNear's
// choice: the first hint that overlaps nothing mapped.
func TestFreeNear(t *testing.T) {
	const lo, hi, size = 0x555555554000, 0x555555600000, 0x200000
	hints := nearHints(lo, hi, size)
	if len(hints) < 3 {
		t.Fatalf("nearHints gave %d hints, want several", len(hints))
	}
	if got, ok := freeNear(lo, hi, size, nil); !ok || got != hints[0] {
		t.Errorf("nothing mapped: freeNear = %#x, %v; want the first hint %#x", got, ok, hints[0])
	}
	// The first two hints taken (one overlapped at its last page only).
	used := [][2]uint64{{hints[0], hints[0] + 0x1000}, {hints[1] + size - 0x1000, hints[1] + size}}
	if got, ok := freeNear(lo, hi, size, used); !ok || got != hints[2] {
		t.Errorf("two hints taken: freeNear = %#x, %v; want the third %#x", got, ok, hints[2])
	}
	// Everything within reach taken.
	if got, ok := freeNear(lo, hi, size, [][2]uint64{{0, ^uint64(0)}}); ok {
		t.Errorf("all taken: freeNear = %#x, want none", got)
	}
	for _, h := range hints {
		if max(h+size, hi)-min(h, lo) > reach {
			t.Errorf("hint %#x is out of rel32 reach of [%#x, %#x)", h, lo, hi)
		}
	}
}

// TestPrebuiltSame checks that a trampoline built ahead is used only for
// the inputs it was built from.
func TestPrebuiltSame(t *testing.T) {
	code := []byte{0x55, 0x48, 0x89, 0xe5, 0x90, 0x90}
	edges := []jump.EdgeCount{{Counter: 64, Taken: true}}
	p := &prebuiltJump{code: code, edges: edges, at: 0x1000, counter: 8}
	if !p.same([]byte{0x55, 0x48, 0x89, 0xe5, 0x90, 0x90}, []jump.EdgeCount{{Counter: 64, Taken: true}}, 0x1000, 8) {
		t.Error("same inputs: not the same")
	}
	for name, ok := range map[string]bool{
		"code":    p.same([]byte{0xcc, 0x48, 0x89, 0xe5, 0x90, 0x90}, edges, 0x1000, 8),
		"length":  p.same(code[:5], edges, 0x1000, 8),
		"edges":   p.same(code, []jump.EdgeCount{{Counter: 72, Taken: true}}, 0x1000, 8),
		"no edge": p.same(code, nil, 0x1000, 8),
		"place":   p.same(code, edges, 0x1100, 8),
		"counter": p.same(code, edges, 0x1000, 16),
	} {
		if ok {
			t.Errorf("another %s: the same", name)
		}
	}
}
