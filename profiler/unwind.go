package profiler

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/sampler"
	"github.com/patchprof/patchprof/unwind"
)

// maxFrames bounds a sampled chain walked by CFI, as the kernel bounds its
// own (PERF_MAX_STACK_DEPTH, 127).
const maxFrames = 127

// cfiOf returns the call frame information of image img, read on first
// use; nil when it has none (Go code, which keeps frame pointers) or it
// cannot be read. Called with tl.mu held.
func (tl *timeline) cfiOf(img *monitor.Image) *unwind.Table { return tl.cfiFile(img.Path) }

// cfiFile returns the call frame information of the file at path, read
// once for the profiled images and the other mappings alike; nil when it
// has none or it cannot be read. Called with tl.mu held.
func (tl *timeline) cfiFile(path string) *unwind.Table {
	t, ok := tl.files[path]
	if !ok {
		t, _ = unwind.Load(path)
		tl.files[path] = t
	}
	return t
}

// walk returns the return addresses of sample s, walked by the call frame
// information of the profiled images of layout l and of the other files
// the process maps, and true; false when the sampled address is in no
// file with CFI, or the walk found nothing
// there (the kernel's frame-pointer chain stands then). Where the walk
// stops short of the outermost frame (in a module without CFI, or past
// the copy of the stack), the kernel's chain goes on from the last
// return address they share, if any. Called with tl.mu held.
func (tl *timeline) walk(l *monitor.Layout, s *sampler.Sample) ([]uint64, bool) {
	if len(s.Stack) == 0 || s.SP == 0 {
		return nil, false
	}
	find := func(pc uint64) (*unwind.Table, uint64, bool) {
		pc = l.Original(pc)
		mp, ok := l.Find(pc)
		if !ok {
			return tl.foreign(l.PID, pc)
		}
		t := tl.cfiOf(mp.Image)
		return t, pc - mp.Bias, t != nil
	}
	if mp, ok := l.Find(l.Original(s.IP)); ok && tl.cfiOf(mp.Image) == nil {
		return nil, false
	} else if !ok {
		if _, _, ok := tl.foreign(l.PID, l.Original(s.IP)); !ok {
			return nil, false
		}
	}
	// In a trampoline's entry check the stack holds its pushes above
	// the site's frame, which the site's CFI does not describe.
	regs := unwind.Regs{IP: s.IP, SP: s.SP + l.Pushed(s.IP), BP: s.BP}
	ras, complete := unwind.Walk(regs, unwind.Stack{Base: s.SP, Data: s.Stack}, find, maxFrames, nil)
	if len(ras) == 0 && !complete {
		return nil, false
	}
	if !complete {
		last := ras[len(ras)-1]
		for j, ra := range s.Callers {
			if ra == last {
				ras = append(ras, s.Callers[j+1:]...)
				break
			}
		}
	}
	return ras, true
}

// A foreignMap is an executable mapping of a file that is no profiled
// image (the C library's), from /proc/PID/maps: a walk goes on through
// its frames by the file's own CFI, so a callback's chain (a qsort
// comparator's) reaches the counted code that called into it.
type foreignMap struct {
	lo, hi, off uint64 // runtime range, and the file offset at lo
	path        string
}

// procMaps is what the timeline last read of one process's mappings.
type procMaps struct {
	maps []foreignMap
	read time.Time
}

// rereadAfter is how stale a process's mappings may be before an address
// in none of them makes the timeline read them again (a library loaded
// since).
const rereadAfter = 100 * time.Millisecond

// foreign returns the CFI of the file mapped at runtime address pc in
// process pid outside its profiled images, and pc's link-time address
// there; false when none holds it, the file has no CFI, or the process's
// mappings cannot be read (it has exited). Called with tl.mu held.
func (tl *timeline) foreign(pid int, pc uint64) (*unwind.Table, uint64, bool) {
	m, ok := tl.foreignMapping(pid, pc)
	if !ok {
		return nil, 0, false
	}
	t := tl.cfiFile(m.path)
	if t == nil {
		return nil, 0, false
	}
	link, ok := t.LinkAddr(pc - m.lo + m.off)
	return t, link, ok
}

// foreignMapping returns the executable file mapping of process pid that
// holds runtime address pc outside its profiled images, reading the
// process's mappings again when none does and they are stale; false when
// none holds it. Called with tl.mu held.
func (tl *timeline) foreignMapping(pid int, pc uint64) (foreignMap, bool) {
	pm := tl.procs[pid]
	if pm == nil || !pm.holds(pc) && time.Since(pm.read) > rereadAfter {
		pm = &procMaps{maps: readMaps(pid), read: time.Now()}
		tl.procs[pid] = pm
	}
	for _, m := range pm.maps {
		if pc >= m.lo && pc < m.hi {
			return m, true
		}
	}
	return foreignMap{}, false
}

// holds reports whether one of pm's mappings holds pc.
func (pm *procMaps) holds(pc uint64) bool {
	for _, m := range pm.maps {
		if pc >= m.lo && pc < m.hi {
			return true
		}
	}
	return false
}

// readMaps returns the executable file mappings of process pid
// (/proc/PID/maps: "lo-hi perms offset dev inode path"), nil when it
// cannot be read. A deleted file's mapping is left out: its path names
// another file, or none.
func readMaps(pid int) []foreignMap {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return nil
	}
	return parseMaps(string(b))
}

// parseMaps reads the executable file mappings of a /proc/PID/maps text.
func parseMaps(text string) []foreignMap {
	var out []foreignMap
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || len(f[1]) < 3 || f[1][2] != 'x' {
			continue
		}
		// The path is what follows the fifth field, spaces and all.
		at := strings.Index(line, f[5])
		path := line[at:]
		if !strings.HasPrefix(path, "/") || strings.HasSuffix(path, " (deleted)") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		l, err1 := strconv.ParseUint(lo, 16, 64)
		h, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || h <= l {
			continue
		}
		out = append(out, foreignMap{lo: l, hi: h, off: off, path: path})
	}
	return out
}
