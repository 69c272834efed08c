package cfg

import (
	"bufio"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected column of testdata/graphs.txt")

// fakeImage is an Image over a few byte ranges, with [codeLo, codeHi) as
// the code for CodeImage.
type fakeImage struct {
	segs           map[uint64][]byte
	codeLo, codeHi uint64
}

func (im *fakeImage) ReadImage(addr uint64, buf []byte) (int, error) {
	for base, data := range im.segs {
		if addr >= base && addr-base < uint64(len(data)) {
			n := copy(buf, data[addr-base:])
			if n < len(buf) {
				return n, ErrNotMapped
			}
			return n, nil
		}
	}
	return 0, ErrNotMapped
}

func (im *fakeImage) IsCode(addr uint64) bool { return addr >= im.codeLo && addr < im.codeHi }

// corpusNames are the functions the corpus programs call, at the
// addresses testdata/gen.sh links them.
var corpusNames = map[uint64]string{0x1100: "puts", 0x1110: "abort", 0x1120: "other"}

// A corpusCase is one line of testdata/graphs.txt:
// name TAB addr TAB code TAB image TAB expected, with image "-" or
// ADDR:HEX, and expected a Graph.String() or "error REASON@ADDR".
type corpusCase struct {
	line     int
	name     string
	addr     uint64
	code     []byte
	image    *fakeImage
	expected string
	fields   []string
}

func readCorpus(t *testing.T, path string) (cases []corpusCase, lines []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		lines = append(lines, line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Split(line, "\t")
		if len(fs) != 5 {
			t.Fatalf("%s:%d: want 5 tab-separated fields, have %d", path, n, len(fs))
		}
		c := corpusCase{line: n, name: fs[0], expected: fs[4], fields: fs}
		if c.addr, err = strconv.ParseUint(fs[1], 16, 64); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		if c.code, err = hex.DecodeString(fs[2]); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		c.image = &fakeImage{segs: map[uint64][]byte{c.addr: c.code}, codeLo: c.addr, codeHi: c.addr + 0x1000}
		if fs[3] != "-" {
			a, h, _ := strings.Cut(fs[3], ":")
			base, err1 := strconv.ParseUint(a, 16, 64)
			data, err2 := hex.DecodeString(h)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatalf("%s:%d: image: %v", path, n, err)
			}
			c.image.segs[base] = data
		}
		cases = append(cases, c)
	}
	return cases, lines
}

// describe gives Build's result in the corpus's expected form.
func describe(g *Graph, err error) string {
	var ce *Error
	if errors.As(err, &ce) {
		return fmt.Sprintf("error %s@%x", ce.Reason(), ce.Addr)
	}
	if err != nil {
		return "error " + err.Error()
	}
	return g.String()
}

func buildCase(c *corpusCase) (*Graph, error) {
	return Build(Options{
		Name: c.name, Addr: c.addr, Code: c.code, Image: c.image,
		CalleeName: func(a uint64) string { return corpusNames[a] },
	})
}

func TestCorpus(t *testing.T) {
	const path = "testdata/graphs.txt"
	cases, lines := readCorpus(t, path)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := buildCase(&c)
			got := describe(g, err)
			if *update {
				c.fields[4] = got
				lines[c.line-1] = strings.Join(c.fields, "\t")
				return
			}
			if got != c.expected {
				t.Errorf("%s:%d: %s\n got: %s\nwant: %s", path, c.line, c.name, got, c.expected)
				if err != nil {
					t.Logf("error: %v", err)
				}
			}
		})
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
