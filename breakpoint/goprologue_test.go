package breakpoint

import (
	"bufio"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

// A prologueCase is one line of testdata/goprologue.txt:
//
//	hex <TAB> after <TAB> target or "none" [<TAB> # comment]
type prologueCase struct {
	line    int
	code    []byte
	after   int
	target  uint64
	ok      bool
	comment string
}

// prologueAddr is where the corpus's functions start.
const prologueAddr = 0x1000

func readPrologueCases(t testing.TB) []prologueCase {
	t.Helper()
	f, err := os.Open("testdata/goprologue.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []prologueCase
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		text := s.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) < 3 {
			t.Fatalf("goprologue.txt:%d: want 3 tab-separated fields, have %d", n, len(fields))
		}
		c := prologueCase{line: n}
		if c.code, err = hex.DecodeString(fields[0]); err != nil {
			t.Fatalf("goprologue.txt:%d: %v", n, err)
		}
		if c.after, err = strconv.Atoi(fields[1]); err != nil {
			t.Fatalf("goprologue.txt:%d: %v", n, err)
		}
		if fields[2] != "none" {
			c.ok = true
			if c.target, err = strconv.ParseUint(fields[2], 0, 64); err != nil {
				t.Fatalf("goprologue.txt:%d: %v", n, err)
			}
		}
		if len(fields) > 3 {
			c.comment = strings.TrimSpace(strings.TrimPrefix(fields[3], "#"))
		}
		cases = append(cases, c)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestGoPrologueEnd(t *testing.T) {
	cases := readPrologueCases(t)
	if len(cases) < 30 {
		t.Fatalf("only %d cases in goprologue.txt", len(cases))
	}
	for _, c := range cases {
		after, target, ok := goPrologueEnd(c.code, prologueAddr)
		if ok != c.ok || after != c.after || target != c.target {
			t.Errorf("goprologue.txt:%d %x (%s): goPrologueEnd = %d, %#x, %v; want %d, %#x, %v",
				c.line, c.code, c.comment, after, target, ok, c.after, c.target, c.ok)
		}
		if c.ok && after > goPrologueMax {
			t.Errorf("goprologue.txt:%d (%s): prologue of %d bytes, longer than goPrologueMax %d", c.line, c.comment, after, goPrologueMax)
		}
	}
}

// TestGoPrologueEndTruncated cuts every recognised prologue short: a prefix
// that ends before the JLS does is not a stack check, and nothing panics.
func TestGoPrologueEndTruncated(t *testing.T) {
	for _, c := range readPrologueCases(t) {
		if !c.ok {
			continue
		}
		for n := 0; n < c.after; n++ {
			if after, target, ok := goPrologueEnd(c.code[:n], prologueAddr); ok {
				t.Errorf("goprologue.txt:%d (%s) cut to %d bytes: goPrologueEnd = %d, %#x, true; want false", c.line, c.comment, n, after, target)
			}
		}
	}
	for _, code := range [][]byte{nil, {0x49}, {0x0f}, {0xff, 0xff, 0xff, 0xff}, {0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64}} {
		if _, _, ok := goPrologueEnd(code, prologueAddr); ok {
			t.Errorf("goPrologueEnd(%x) recognised a prologue", code)
		}
	}
}

func FuzzGoPrologueEnd(f *testing.F) {
	for _, c := range readPrologueCases(f) {
		f.Add(c.code)
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		after, target, ok := goPrologueEnd(code, prologueAddr)
		if !ok {
			if after != 0 || target != 0 {
				t.Errorf("goPrologueEnd(%x) = %d, %#x, false; want zeros", code, after, target)
			}
			return
		}
		if after <= 0 || after > len(code) {
			t.Errorf("goPrologueEnd(%x) = %d, out of the code", code, after)
		}
	})
}
