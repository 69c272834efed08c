package cfg

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Synthetic exception data: .eh_frame at ehAddr, .gcc_except_table at
// etAddr, the function at fnAddr, an indirect slot at slotAddr.
const (
	ehAddr   = 0x2000
	etAddr   = 0x3000
	fnAddr   = 0x1000
	slotAddr = 0x4000
	hdrAddr  = 0x1f00 // DataBase (.eh_frame_hdr)
	txtAddr  = 0x0f00 // TextBase (.text)
)

// ehWriter appends little-endian fields to a section at a link-time address.
type ehWriter struct {
	addr uint64
	b    []byte
}

func (w *ehWriter) u8(v ...byte)  { w.b = append(w.b, v...) }
func (w *ehWriter) u32(v uint32)  { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *ehWriter) uleb(v uint64) { w.b = appendULEB(w.b, v) }
func (w *ehWriter) here() uint64  { return w.addr + uint64(len(w.b)) }

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// ptr appends the pointer v in encoding enc, as a producer would write it.
func (w *ehWriter) ptr(enc byte, v uint64) {
	switch enc & 0x70 {
	case ehPEPcrel:
		v -= w.here()
	case ehPETextrel:
		v -= txtAddr
	case ehPEDatarel:
		v -= hdrAddr
	case ehPEFuncrel:
		v -= fnAddr
	case ehPEAligned:
		for w.here()%8 != 0 {
			w.b = append(w.b, 0)
		}
		w.b = binary.LittleEndian.AppendUint64(w.b, v)
		return
	}
	switch enc & 0x0f {
	case ehPEAbsptr, ehPEUdata8, ehPESdata8:
		w.b = binary.LittleEndian.AppendUint64(w.b, v)
	case ehPEUdata4, ehPESdata4:
		w.u32(uint32(v))
	case ehPEUdata2, ehPESdata2:
		w.b = binary.LittleEndian.AppendUint16(w.b, uint16(v))
	case ehPEUleb128:
		w.uleb(v)
	case ehPESleb128:
		w.b = appendSLEB(w.b, int64(v))
	default:
		panic(fmt.Sprintf("test writer: encoding %#x", enc))
	}
}

// callSite is one record of an LSDA's call-site table, relative values.
type callSite struct{ start, length, pad, action uint64 }

// ehCase describes one synthetic function's unwind data.
type ehCase struct {
	name    string
	aug     string // CIE augmentation
	fdeEnc  byte
	lsdaEnc byte
	lpEnc   byte   // LPStart encoding, ehPEOmit for none
	lpStart uint64 // LPStart when lpEnc is not omit
	ttype   bool   // a type table is present
	csEnc   byte
	sites   []callSite
	want    []uint64
}

// sections builds the .eh_frame and .gcc_except_table of c: a CIE, one
// FDE for [fnAddr, fnAddr+0x100) and the terminator.
func (c ehCase) sections() (EHSections, *fakeImage) {
	et := &ehWriter{addr: etAddr}
	et.u8(0xee) // the LSDA is not at the section start
	lsda := et.here()
	et.u8(c.lpEnc)
	if c.lpEnc != ehPEOmit {
		et.ptr(c.lpEnc, c.lpStart)
	}
	if c.ttype {
		et.u8(0x9b)
		et.uleb(9)
	} else {
		et.u8(ehPEOmit)
	}
	cs := &ehWriter{}
	for _, s := range c.sites {
		cs.ptr(c.csEnc, s.start)
		cs.ptr(c.csEnc, s.length)
		cs.ptr(c.csEnc, s.pad)
		cs.uleb(s.action)
	}
	et.u8(c.csEnc)
	et.uleb(uint64(len(cs.b)))
	et.u8(cs.b...)
	et.u8(1, 0, 0, 0, 0, 0, 0, 0) // action and type tables

	eh := &ehWriter{addr: ehAddr}
	eh.u32(0) // CIE length, patched below
	eh.u32(0) // CIE ID
	eh.u8(1)
	eh.u8([]byte(c.aug)...)
	eh.u8(0)
	eh.uleb(1)  // code alignment
	eh.u8(0x78) // data alignment -8
	eh.u8(16)   // return address register
	aug := &ehWriter{addr: eh.here() + 1}
	for _, ch := range strings.TrimPrefix(c.aug, "z") {
		switch ch {
		case 'P':
			aug.u8(0x9b)
			aug.ptr(0x1b, slotAddr)
		case 'L':
			aug.u8(c.lsdaEnc)
		case 'R':
			aug.u8(c.fdeEnc)
		}
	}
	if c.aug != "" {
		eh.uleb(uint64(len(aug.b)))
		eh.u8(aug.b...)
	}
	for len(eh.b)%8 != 0 {
		eh.u8(0) // DW_CFA_nop
	}
	binary.LittleEndian.PutUint32(eh.b, uint32(len(eh.b)-4))

	fde := len(eh.b)
	eh.u32(0)
	eh.u32(uint32(len(eh.b))) // CIE pointer: back to offset 0
	eh.ptr(c.fdeEnc, fnAddr)
	eh.ptr(c.fdeEnc&0x0f, 0x100)
	if strings.ContainsRune(c.aug, 'L') {
		a := &ehWriter{addr: eh.here() + 1}
		switch {
		case c.lsdaEnc&ehPEIndirect != 0:
			a.ptr(c.lsdaEnc&^ehPEIndirect, slotAddr)
		default:
			a.ptr(c.lsdaEnc, lsda)
		}
		eh.uleb(uint64(len(a.b)))
		eh.u8(a.b...)
	} else if c.aug != "" && c.aug[0] == 'z' {
		eh.uleb(0)
	}
	for len(eh.b)%8 != 0 {
		eh.u8(0)
	}
	binary.LittleEndian.PutUint32(eh.b[fde:], uint32(len(eh.b)-fde-4))
	eh.u32(0) // terminator

	im := &fakeImage{segs: map[uint64][]byte{slotAddr: binary.LittleEndian.AppendUint64(nil, lsda)}}
	return EHSections{
		EHFrame:     EHSection{Addr: ehAddr, Data: eh.b},
		ExceptTable: EHSection{Addr: etAddr, Data: et.b},
		TextBase:    txtAddr, DataBase: hdrAddr, Image: im,
	}, im
}

var sites = []callSite{
	{0x00, 0x05, 0x00, 0}, // no landing pad
	{0x05, 0x10, 0x40, 1}, // a catch
	{0x15, 0x05, 0x30, 0}, // a cleanup
	{0x1a, 0x05, 0x40, 3}, // the catch again
}

var ehCases = []ehCase{
	{name: "gcc-pie", aug: "zPLR", fdeEnc: 0x1b, lsdaEnc: 0x1b, lpEnc: ehPEOmit, ttype: true, csEnc: ehPEUleb128,
		sites: sites, want: []uint64{0x1030, 0x1040}},
	{name: "udata4", aug: "zLR", fdeEnc: ehPEUdata4, lsdaEnc: ehPEUdata4, lpEnc: ehPEOmit, csEnc: ehPEUdata4,
		sites: sites, want: []uint64{0x1030, 0x1040}},
	{name: "absptr", aug: "zPLR", fdeEnc: ehPEAbsptr, lsdaEnc: ehPEAbsptr, lpEnc: ehPEOmit, csEnc: ehPEUleb128,
		sites: sites, want: []uint64{0x1030, 0x1040}},
	{name: "datarel", aug: "zLR", fdeEnc: 0x1b, lsdaEnc: ehPEDatarel | ehPESdata4, lpEnc: ehPEOmit, csEnc: ehPEUleb128,
		sites: sites, want: []uint64{0x1030, 0x1040}},
	{name: "textrel", aug: "zLR", fdeEnc: ehPETextrel | ehPEUdata4, lsdaEnc: 0x1b, lpEnc: ehPEOmit, csEnc: ehPEUleb128,
		sites: sites, want: []uint64{0x1030, 0x1040}},
	{name: "indirect", aug: "zPLR", fdeEnc: 0x1b, lsdaEnc: ehPEIndirect | ehPEPcrel | ehPESdata4, lpEnc: ehPEOmit, csEnc: ehPEUleb128,
		sites: sites, want: []uint64{0x1030, 0x1040}},
	{name: "aligned", aug: "zLR", fdeEnc: 0x1b, lsdaEnc: ehPEAligned, lpEnc: ehPEOmit, csEnc: ehPEUleb128,
		sites: sites, want: []uint64{0x1030, 0x1040}},
	{name: "lpstart", aug: "zPLR", fdeEnc: 0x1b, lsdaEnc: 0x1b, lpEnc: ehPEUdata4, lpStart: 0x1080, csEnc: ehPESleb128,
		sites: sites, want: []uint64{0x10b0, 0x10c0}},
	{name: "lpstart-funcrel", aug: "zLR", fdeEnc: 0x1b, lsdaEnc: 0x1b, lpEnc: ehPEFuncrel | ehPEUleb128, lpStart: 0x1010, csEnc: ehPEUdata2,
		sites: sites, want: []uint64{0x1040, 0x1050}},
	{name: "no-pads", aug: "zPLR", fdeEnc: 0x1b, lsdaEnc: 0x1b, lpEnc: ehPEOmit, csEnc: ehPEUleb128,
		sites: []callSite{{0, 5, 0, 0}}},
	{name: "empty-table", aug: "zPLR", fdeEnc: 0x1b, lsdaEnc: 0x1b, lpEnc: ehPEOmit, csEnc: ehPEUleb128},
	{name: "no-lsda", aug: "zR", fdeEnc: 0x1b},
	{name: "no-augmentation", aug: ""},
}

func TestParseLandingPads(t *testing.T) {
	for _, c := range ehCases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := c.sections()
			got, err := ParseLandingPads(s)
			if err != nil {
				t.Fatal(err)
			}
			want := map[uint64][]uint64{}
			if len(c.want) > 0 {
				want[fnAddr] = c.want
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %#x, want %#x", got, want)
			}
		})
	}
}

// TestParseLandingPadsBad is the "does not crash" table: malformed data
// returns an *EHError saying where.
func TestParseLandingPadsBad(t *testing.T) {
	good, _ := ehCases[0].sections()
	edit := func(f func(s *EHSections)) EHSections {
		s := good
		s.EHFrame.Data = bytes.Clone(good.EHFrame.Data)
		s.ExceptTable.Data = bytes.Clone(good.ExceptTable.Data)
		f(&s)
		return s
	}
	cieLen := int(binary.LittleEndian.Uint32(good.EHFrame.Data)) + 4
	fdeLSDA := cieLen + 4 + 4 + 4 + 4 + 1 // length, CIE pointer, pc begin, range, aug length
	tests := []struct {
		name    string
		s       EHSections
		section string
	}{
		{"length-past-end", edit(func(s *EHSections) { s.EHFrame.Data[0] = 0xf0 }), ".eh_frame"},
		{"length-shorter-than-id", EHSections{EHFrame: EHSection{Data: []byte{2, 0, 0, 0, 0, 0, 0, 0}}}, ".eh_frame"},
		{"extended-length-truncated", EHSections{EHFrame: EHSection{Data: []byte{0xff, 0xff, 0xff, 0xff, 1}}}, ".eh_frame"},
		{"cie-version", edit(func(s *EHSections) { s.EHFrame.Data[8] = 2 }), ".eh_frame"},
		{"cie-pointer", edit(func(s *EHSections) { s.EHFrame.Data[cieLen+4] += 4 }), ".eh_frame"},
		{"cie-pointer-before-section", edit(func(s *EHSections) { s.EHFrame.Data[cieLen+7] = 0x70 }), ".eh_frame"},
		{"unknown-format", edit(func(s *EHSections) {
			i := bytes.Index(s.EHFrame.Data, []byte{0x1b, 0x1b})
			s.EHFrame.Data[i+1] = 0x05
		}), ".eh_frame"},
		{"unknown-application", edit(func(s *EHSections) {
			i := bytes.Index(s.EHFrame.Data, []byte{0x1b, 0x1b})
			s.EHFrame.Data[i+1] = 0x6b
		}), ".eh_frame"},
		{"unterminated-augmentation", EHSections{EHFrame: EHSection{Data: []byte{6, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R'}}}, ".eh_frame"},
		{"lsda-outside-table", edit(func(s *EHSections) { s.EHFrame.Data[fdeLSDA] += 0x40 }), ".eh_frame"},
		{"call-site-table-past-end", edit(func(s *EHSections) { s.ExceptTable.Data[5] = 0x7f }), ".gcc_except_table"},
		{"call-site-truncated", edit(func(s *EHSections) { s.ExceptTable.Data[5]-- }), ".gcc_except_table"},
		{"indirect-without-image", func() EHSections {
			s, _ := ehCases[5].sections()
			s.Image = nil
			return s
		}(), ".eh_frame"},
		{"indirect-unmapped", func() EHSections {
			s, im := ehCases[5].sections()
			im.segs = nil
			return s
		}(), ".eh_frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pads, err := ParseLandingPads(tt.s)
			var ee *EHError
			if !errors.As(err, &ee) {
				t.Fatalf("got %#x, %v; want an *EHError", pads, err)
			}
			if ee.Section != tt.section {
				t.Errorf("error in %s, want %s: %v", ee.Section, tt.section, err)
			}
			if len(pads) != 0 {
				t.Errorf("pads %#x from bad data", pads)
			}
			if tt.name == "indirect-unmapped" && !errors.Is(err, ErrNotMapped) {
				t.Errorf("%v does not wrap ErrNotMapped", err)
			}
		})
	}
	// Every truncation of good data returns (pads found, or an error),
	// never panics, and never invents a pad.
	for n := range good.EHFrame.Data {
		s := good
		s.EHFrame.Data = good.EHFrame.Data[:n]
		pads, _ := ParseLandingPads(s)
		if p := pads[fnAddr]; p != nil && !reflect.DeepEqual(p, ehCases[0].want) {
			t.Errorf(".eh_frame[:%d]: pads %#x", n, p)
		}
	}
	for n := range good.ExceptTable.Data {
		s := good
		s.ExceptTable.Data = good.ExceptTable.Data[:n]
		pads, err := ParseLandingPads(s)
		if err == nil && n < 12 {
			t.Errorf(".gcc_except_table[:%d]: pads %#x, no error", n, pads)
		}
	}
}

func FuzzParseLandingPads(f *testing.F) {
	for _, c := range ehCases {
		s, _ := c.sections()
		f.Add(s.EHFrame.Data, s.ExceptTable.Data)
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x80}, []byte{})
	f.Fuzz(func(t *testing.T, eh, et []byte) {
		im := &fakeImage{segs: map[uint64][]byte{slotAddr: binary.LittleEndian.AppendUint64(nil, etAddr+1)}}
		pads, _ := ParseLandingPads(EHSections{
			EHFrame:     EHSection{Addr: ehAddr, Data: eh},
			ExceptTable: EHSection{Addr: etAddr, Data: et},
			TextBase:    txtAddr, DataBase: hdrAddr, Image: im,
		})
		for fn, p := range pads {
			if len(p) == 0 {
				t.Fatalf("function %#x listed with no pads", fn)
			}
			for i := 1; i < len(p); i++ {
				if p[i-1] >= p[i] {
					t.Fatalf("function %#x: pads %#x not sorted and distinct", fn, p)
				}
			}
		}
	})
}

// An fdeRange is one FDE as readelf prints it.
type fdeRange struct {
	start, end uint64
	lsda       bool // its augmentation data is not all zero
}

// readelfFDEs lists the FDEs of path with readelf --debug-dump=frames,
// the independent oracle for function ranges and which have an LSDA.
func readelfFDEs(t *testing.T, path string) map[uint64]fdeRange {
	t.Helper()
	out, err := exec.Command(mustHave(t, "readelf"), "--debug-dump=frames", path).CombinedOutput()
	if err != nil {
		t.Fatalf("readelf: %v\n%s", err, out)
	}
	// "000000a8 0000000000000024 00000024 FDE cie=00000088 pc=00000000000011b9..000000000000124f"
	fdeRe := regexp.MustCompile(`^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.([0-9a-f]+)`)
	augRe := regexp.MustCompile(`^\s+Augmentation data:\s+([0-9a-f ]+)$`)
	fdes := map[uint64]fdeRange{}
	var cur *fdeRange
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := fdeRe.FindStringSubmatch(line); m != nil {
			s, _ := strconv.ParseUint(m[1], 16, 64)
			e, _ := strconv.ParseUint(m[2], 16, 64)
			fdes[s] = fdeRange{start: s, end: e}
			r := fdes[s]
			cur = &r
			continue
		}
		if len(line) > 0 && line[0] != ' ' {
			cur = nil // a CIE or a ZERO terminator
			continue
		}
		if m := augRe.FindStringSubmatch(line); m != nil && cur != nil {
			cur.lsda = strings.Trim(m[1], "0 ") != ""
			fdes[cur.start] = *cur
		}
	}
	return fdes
}

// objdumpStarts returns the instruction starts objdump finds in path.
func objdumpStarts(t *testing.T, path string) map[uint64]bool {
	t.Helper()
	out, err := exec.Command(mustHave(t, "objdump"), "-d", "--no-show-raw-insn", path).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	re := regexp.MustCompile(`^\s+([0-9a-f]+):\t`)
	starts := map[uint64]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			starts[a] = true
		}
	}
	return starts
}

// TestLandingPadsGxx reads the landing pads of a real g++ build at -O0
// and -O2 and checks them against readelf (each pad inside an FDE with an
// LSDA) and objdump (each pad an instruction start); then builds the flow
// graph of every function with pads: each pad starts a Landing block, no
// error, and no code is Dead. (A pad may also be a jump target: g++ -O0
// jumps from a cleanup into the catch-all pad after it.)
func TestLandingPadsGxx(t *testing.T) {
	gxx := mustHave(t, "g++")
	src, err := filepath.Abs("testdata/lsda.cpp")
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "lsda")
			run(t, dir, gxx, opt, "-o", exe, src)
			f, err := os.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			pads, err := ELFLandingPads(f)
			if err != nil {
				t.Fatal(err)
			}
			fdes := readelfFDEs(t, exe)
			starts := objdumpStarts(t, exe)
			for fn, lp := range pads {
				fde, ok := fdes[fn]
				if !ok || !fde.lsda {
					t.Errorf("pads %#x for %#x, which readelf shows no FDE with an LSDA for (%+v)", lp, fn, fde)
				}
				for _, p := range lp {
					if p < fde.start || p >= fde.end {
						t.Errorf("pad %#x outside its FDE [%#x, %#x)", p, fde.start, fde.end)
					}
					if !starts[p] {
						t.Errorf("pad %#x of %#x is not an instruction start in objdump", p, fn)
					}
				}
			}
			b := openBinary(t, exe)
			perName := map[string]int{}
			for _, fn := range b.st.Funcs {
				lp := pads[fn.Addr]
				for _, name := range []string{"catcher", "cleanup", "plain"} {
					if strings.Contains(fn.Name, name) {
						perName[name] += len(lp)
					}
				}
				if len(lp) == 0 {
					continue
				}
				code, ok := b.st.Code(fn.Addr, int(fn.Size))
				if !ok {
					t.Fatalf("no code for %s", fn.Name)
				}
				o := Options{Name: fn.Name, Addr: fn.Addr, Code: code, Image: b.im, CalleeName: b.names, SplitCalls: true, LandingPads: lp}
				g, err := Build(o)
				if err != nil {
					t.Errorf("%s with landing pads %#x: %v", fn.Name, lp, err)
					continue
				}
				checkGraph(t, g, o)
				for _, p := range lp {
					i, ok := g.BlockAt(p)
					if !ok || g.Blocks[i].Start != p || !g.Blocks[i].Landing {
						t.Errorf("%s: pad %#x does not start a Landing block\n%v", fn.Name, p, g)
					}
				}
				if g.Dead != 0 {
					t.Errorf("%s: %d bytes dead with its landing pads given\n%v", fn.Name, g.Dead, g)
				}
			}
			if perName["catcher"] == 0 || perName["cleanup"] == 0 || perName["plain"] != 0 {
				t.Errorf("landing pads per function %v; want catcher and cleanup >= 1, plain 0", perName)
			}
		})
	}
}

// TestLandingPadsNoExceptTable: a C program has .eh_frame but no LSDA.
func TestLandingPadsNoExceptTable(t *testing.T) {
	gcc := mustHave(t, "gcc")
	src, err := filepath.Abs("testdata/switch.c")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "switch")
	run(t, dir, gcc, "-O0", "-o", exe, src)
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pads, err := ELFLandingPads(f)
	if err != nil || len(pads) != 0 {
		t.Errorf("got %#x, %v; want none", pads, err)
	}
	if _, err := ELFLandingPads(bytes.NewReader([]byte("not an ELF file"))); err == nil {
		t.Error("no error for a file that is not ELF")
	}
}

// TestBuildLandingPads: code after a call to __cxa_throw is Dead without
// its landing pad, and a Landing block entered from outside with it; pads
// outside the function are ignored, one inside an instruction makes the
// function unrecoverable.
func TestBuildLandingPads(t *testing.T) {
	code := []byte{
		0xe8, 0xfb, 0x0f, 0x00, 0x00, // 1000: call 2000 <__cxa_throw>
		0x48, 0x89, 0xc7, //             1005: mov %rax,%rdi (landing pad)
		0xe8, 0xf3, 0x0f, 0x00, 0x00, // 1008: call 2000 <__cxa_throw>
		0xc3, //                         100d: ret (dead)
	}
	names := func(a uint64) string {
		if a == 0x2000 {
			return "__cxa_throw"
		}
		return ""
	}
	tests := []struct {
		pads []uint64
		want string
		dead int
		err  error
	}{
		{nil, "1000-1005/1:noreturn", 9, nil},
		{[]uint64{0x1005, 0x3000, 0xfff}, "1000-1005/1:noreturn !1005-100d/2:noreturn", 1, nil},
		{[]uint64{0x1001}, "", 0, ErrMidInstruction}, // inside a reached instruction
		{[]uint64{0x1006}, "", 0, ErrData},           // inside an unreached one: 0x1005 unexplained
	}
	for _, tt := range tests {
		o := Options{Name: "f", Addr: 0x1000, Code: code, CalleeName: names, LandingPads: tt.pads}
		g, err := Build(o)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("pads %#x: got %v, want %v", tt.pads, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("pads %#x: %v", tt.pads, err)
			continue
		}
		checkGraph(t, g, o)
		if got := g.String(); got != tt.want || g.Dead != tt.dead {
			t.Errorf("pads %#x: got %s dead %d, want %s dead %d", tt.pads, got, g.Dead, tt.want, tt.dead)
		}
	}
}
