//go:build linux && amd64

package monitor

import (
	"bytes"

	"github.com/patchprof/patchprof/breakpoint/jump"
)

// Trampolines built once a program. A test suite runs one program many
// times (Jim Tcl's tests: 82 jimsh processes), and each process built
// the same trampolines again at its first hits (jumpHot), most of
// patchprof's time there. A trampoline's bytes depend on its site's
// address and its own only through their difference, but for the
// absolute addresses it records (jump.Trampoline.MovedTo); a process of
// the same program maps its region as far from the executable as the
// last one did. So the image keeps each site's trampoline as first built,
// and buildJump moves it into a later process instead of building it,
// when what the build would read is what it was built from: the same
// original bytes, the same counter offsets, a jump table's targets moved
// alike.

// movedJump returns site i's trampoline moved from the one an earlier
// process of img built, to at for the site at addr, code being the
// site's original bytes and counter and edges what the build would be
// given; nil when there is none or it does not apply.
func (img *Image) movedJump(i int, code []byte, addr, at uint64, counter uint32, edges []jump.EdgeCount) *jump.Trampoline {
	if img == nil || i >= len(img.tmpl) || img.tmpl[i] == nil {
		return nil
	}
	tp := img.tmpl[i]
	d := addr - tp.tr.Addr
	if tp.counter != counter || len(tp.edges) != len(edges) || len(code) < len(tp.src) || !bytes.Equal(code[:len(tp.src)], tp.src) {
		return nil
	}
	for k, e := range edges {
		t := tp.edges[k]
		if e.Counter != t.Counter || e.Taken != t.Taken || (e.Table == 0) != (t.Table == 0) || (e.Table != 0 && e.Table != t.Table+d) {
			return nil
		}
	}
	tr, ok := tp.tr.MovedTo(addr, at)
	if !ok {
		return nil
	}
	return tr
}

// keepJump keeps tr, just built for site i from code with counter and
// edges, as the template of the image's later processes, unless one is
// kept already. The first process of an image keeps none: a program run
// once (SQLite's driver: 15,000 trampolines, 8 to 20 MB) would pay for
// templates nothing moves; a suite's second process keeps them for the
// rest.
func (img *Image) keepJump(i int, tr *jump.Trampoline, code []byte, counter uint32, edges []jump.EdgeCount) {
	if img == nil || img.Table == nil || i >= img.Table.Len() || img.planted < 2 {
		return
	}
	if img.tmpl == nil {
		img.tmpl = make([]*jumpTemplate, img.Table.Len())
	}
	if img.tmpl[i] != nil {
		return
	}
	n := tr.Source()
	t := tr.Template()
	if t == nil || n > len(code) {
		return
	}
	img.tmpl[i] = &jumpTemplate{tr: t, src: bytes.Clone(code[:n]), counter: counter, edges: append([]jump.EdgeCount(nil), edges...)}
}
