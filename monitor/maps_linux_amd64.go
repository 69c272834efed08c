//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/breakpoint"
)

// A mapping is an image planted in one address space.
type mapping struct {
	Mapped
	tab  *breakpoint.Table // Image.Table viewed at Bias
	seen bool              // found again by the current scan
	xol  *xolArea          // scratch region of the out-of-line engine, nil if none
	// xolFailed: no scratch region could be mapped; the classic cycle
	// serves the module in this process.
	xolFailed bool
	jmp       *jumpArea // trampolines of the in-process engine, nil if none
	// pre holds the trampolines an eager attach built ahead, by site,
	// until buildJump takes them (prebuild_linux_amd64.go).
	pre []*prebuiltJump
	// text is what the program did to this code (mremap, munmap,
	// mprotect: textchange_linux_amd64.go), nil if nothing.
	text *textChange
	// hotDone: the functions earlier processes ran were patched at this
	// mapping's first hit, or there was none (hot_linux_amd64.go).
	hotDone bool
	// lazyDone holds the functions planned at their first hit
	// (breakpoint's LazyFuncs) whose derived sites this space has its
	// original bytes at again (lazy_linux_amd64.go); a fork child gets a
	// copy.
	lazyDone map[int32]bool
}

// lookup returns the mapping and site at runtime address pc.
func (mm *space) lookup(pc uint64) (*mapping, int, bool) {
	for _, mp := range mm.maps {
		if pc >= mp.Lo && pc < mp.Hi && !mp.isGone(pc) {
			i, ok := mp.tab.Lookup(pc)
			return mp, i, ok
		}
	}
	return nil, 0, false
}

// snapshot returns what is mapped, for a fault report.
func (mm *space) snapshot() []Mapped {
	out := make([]Mapped, len(mm.maps))
	for k, mp := range mm.maps {
		out[k] = mp.Mapped
	}
	return out
}

// loadBias compares the entry point the kernel used (AT_ENTRY in the auxiliary
// vector) with the ELF header's: the difference is where a PIE was loaded.
func loadBias(pid int, entry uint64) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/auxv")
	if err != nil {
		return 0, fmt.Errorf("read auxiliary vector: %w", err)
	}
	const atEntry = 9
	for i := 0; i+16 <= len(b); i += 16 {
		k := binary.LittleEndian.Uint64(b[i:])
		v := binary.LittleEndian.Uint64(b[i+8:])
		if k == atEntry {
			return v - entry, nil
		}
	}
	return 0, errors.New("no AT_ENTRY in the auxiliary vector")
}

// addImage registers img under its path and gives it its id.
func (m *mon) addImage(img *Image) *Image {
	img.id = len(m.imgs)
	m.imgs = append(m.imgs, img)
	m.images[img.Path] = img
	return img
}

// image returns the image to plant for the file at path, asking
// Options.Images the first time.
func (m *mon) image(path string, exe bool) *Image {
	if img, ok := m.images[path]; ok {
		return img
	}
	var img *Image
	if m.o.Images != nil {
		img = m.o.Images(path, exe)
	}
	if img == nil || img.Table == nil || img.Table.Len() == 0 {
		m.images[path] = nil
		return nil
	}
	img.Path = path
	return m.addImage(img)
}

// A region is one executable file mapping read from /proc/PID/maps.
type region struct {
	lo, hi, off uint64
	path        string
}

// readMaps returns the executable mappings of files in process pid.
func readMaps(pid int) ([]region, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return nil, fmt.Errorf("read mappings: %w", err)
	}
	return parseMaps(b), nil
}

// parseMaps returns the executable mappings of files in the text of a
// /proc/PID/maps file. Lines it cannot read are skipped.
func parseMaps(b []byte) []region {
	var out []region
	for _, line := range strings.Split(string(b), "\n") {
		// start-end perms offset dev inode path  (proc(5))
		f := strings.Fields(line)
		if len(f) < 6 || len(f[1]) < 3 || f[1][2] != 'x' || !strings.HasPrefix(f[5], "/") {
			continue
		}
		// A file removed or replaced since it was mapped keeps its path
		// with " (deleted)" after it, as /proc/PID/exe has it: the
		// executable's is analysed through /proc/PID/exe (a program's
		// new build deployed over the running one); another's finds no
		// image (Images cannot open it). A path with spaces is kept
		// whole.
		r := region{path: strings.Join(f[5:], " ")}
		var ok bool
		if r.lo, r.hi, ok = mapRange(f[0]); !ok {
			continue
		}
		var err error
		if r.off, err = strconv.ParseUint(f[2], 16, 64); err != nil {
			continue
		}
		out = append(out, r)
	}
	return out
}

// runOf returns the end of the run of regions that starts at k, one
// file's mappings at one bias (code mremap moved elsewhere is a piece of
// its own: pieceOf), and the index after it.
func runOf(regions []region, k int) (hi uint64, next int) {
	r := regions[k]
	hi, next = r.hi, k+1
	for ; next < len(regions) && regions[next].path == r.path && regions[next].lo-regions[next].off == r.lo-r.off; next++ {
		hi = max(hi, regions[next].hi)
	}
	return hi, next
}

// allRanges returns every mapping of /proc/PID/maps's text b, file or
// not, as [lo, hi) pairs.
func allRanges(b []byte) [][2]uint64 {
	var out [][2]uint64
	for _, line := range strings.Split(string(b), "\n") {
		f, _, _ := strings.Cut(line, " ")
		if lo, hi, ok := mapRange(f); ok {
			out = append(out, [2]uint64{lo, hi})
		}
	}
	return out
}

// mapRange reads the "start-end" field of a /proc/PID/maps line.
func mapRange(field string) (lo, hi uint64, ok bool) {
	l, h, ok := strings.Cut(field, "-")
	if !ok {
		return 0, 0, false
	}
	lo, e1 := strconv.ParseUint(l, 16, 64)
	hi, e2 := strconv.ParseUint(h, 16, 64)
	return lo, hi, e1 == nil && e2 == nil
}

// scanMaps brings mm's mappings up to date with the process's: images newly
// mapped are planted, images no longer mapped are forgotten (their code is
// gone, with our bytes in it). It returns an error only when the root image
// could not be planted. (The out-of-line engine maps a module's scratch
// region later, at its first hit: see hitXOL.)
//
// Preconditions: on the tracer thread; no thread of mm runs.
func (m *mon) scanMaps(mm *space) error {
	regions, err := readMaps(mm.tgid)
	if err != nil {
		return err
	}
	for _, mp := range mm.maps {
		mp.seen = false
	}
	exe, _ := os.Readlink("/proc/" + strconv.Itoa(mm.tgid) + "/exe")
	var rootErr error
	for k := 0; k < len(regions); {
		r := regions[k]
		lo := r.lo
		hi, j := runOf(regions, k)
		k = j
		var known *mapping
		for _, mp := range mm.maps {
			if mp.Image.Path == r.path && mp.Lo == lo {
				known = mp
			}
		}
		if known != nil {
			known.seen = true
			known.Hi = hi
			continue
		}
		img := m.image(r.path, r.path == exe)
		if img == nil {
			continue
		}
		var bias uint64
		if img.LinkAddr != nil {
			link, ok := img.LinkAddr(r.off)
			if !ok {
				continue
			}
			bias = r.lo - link
		} else {
			// The root image without segment information: its bias from
			// the entry point the kernel used.
			if bias, err = loadBias(mm.tgid, m.o.Entry); err != nil {
				if img == m.rootImg {
					rootErr = err
				}
				continue
			}
		}
		mp := &mapping{Mapped: Mapped{Image: img, Bias: bias, Lo: lo, Hi: hi}, tab: img.Table.At(bias), seen: true}
		if !pieceOf(mm, mp, r, regions) {
			m.lose(fmt.Errorf("plant code of %s moved to %#x in process %d: its original bytes were never read", img.Path, lo, mm.tgid))
			continue
		}
		if err := mp.tab.Plant(mp.memIn(mm)); err != nil {
			if img == m.rootImg {
				rootErr = err
			} else {
				m.lose(fmt.Errorf("plant %s in process %d: %w", img.Path, mm.tgid, err))
			}
			continue
		}
		img.planted++
		mm.maps = append(mm.maps, mp)
	}
	kept := mm.maps[:0]
	for _, mp := range mm.maps {
		if mp.seen {
			kept = append(kept, mp)
		} else if mm.ctr != nil && !mm.ctr.inherited {
			m.foldMapping(mm.ctr, mp) // unmapped (dlclose): its counts so far
		}
	}
	clear(mm.maps[len(kept):])
	mm.maps = kept
	m.notifyLayout(mm)
	return rootErr
}

// mapped reports whether address addr is mapped in process pid
// (/proc/PID/maps).
func mapped(pid int, addr uint64) (bool, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if lo, hi, ok := mapRange(strings.Fields(line + " x")[0]); ok && addr >= lo && addr < hi {
			return true, nil
		}
	}
	return false, nil
}
