package output

import (
	"bytes"
	"math"
	"os"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// blocksSource is the synthetic source of blocksProfile.
const blocksSource = `int
count(int n)
{
	int i, odd = 0;

	for (i = 0; i < n; i++)
		if (i & 1 && i > 2)
			odd++;
	return odd;
}
`

// blocksReadFile serves blocksSource as /src/count.c.
func blocksReadFile(name string) ([]byte, error) {
	if name == "/src/count.c" {
		return []byte(blocksSource), nil
	}
	return nil, os.ErrNotExist
}

// blocksProfile is a --blocks profile of count(10) over blocksSource: the
// for test runs 11 times, the if's two jumps 10 and 5 times, one branch
// never runs.
func blocksProfile() *profile.Profile {
	code := 0
	f := "/src/count.c"
	return &profile.Profile{
		Version: profile.Version, Executable: "/src/count", Args: []string{"./count"}, Mode: profile.ModeLinesFuncs,
		Exit: profile.Exit{Code: &code},
		Lines: []profile.Line{
			{File: f, Line: 3, Count: 1}, {File: f, Line: 4, Count: 1}, {File: f, Line: 6, Count: 11},
			{File: f, Line: 7, Count: 10}, {File: f, Line: 8, Count: 3}, {File: f, Line: 9, Count: 1}, {File: f, Line: 10, Count: 1},
		},
		Functions: []profile.Function{
			{Name: "count", Count: 1, File: f, Line: 3, Address: 0x1000, Blocks: 7, BlocksExecuted: 7, Edges: 9},
			{Name: "unused", Count: 0, File: f, Line: 3, Address: 0x1100, Blocks: 2, BlocksExecuted: 0, Edges: 1},
		},
		Sites: []profile.Site{{Address: 0x1000, Count: 1, Kind: "line,func,block"}},
		Branches: []profile.Branch{
			{File: f, Line: 7, Address: 0x1024, Taken: 5, NotTaken: 5},
			{File: f, Line: 6, Address: 0x1040, Taken: 10, NotTaken: 1},
			{File: f, Line: 7, Address: 0x101c, Taken: 2, NotTaken: 3},
			{File: f, Line: 9, Address: 0x1050, Taken: 0, NotTaken: 0},
		},
	}
}

func TestBlocksListingGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, blocksProfile(), Options{ReadFile: blocksReadFile, Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "blocks/listing.golden", buf.String())
}

func TestBlocksLCOVGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteLCOV(&buf, blocksProfile()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "blocks/lcov.golden", buf.String())
}

func TestBlocksGcovGolden(t *testing.T) {
	checkGolden(t, "blocks/gcov.golden", gcovFiles(t, blocksProfile(), blocksReadFile))
}

func TestBlocksDisasmGolden(t *testing.T) {
	fns := []DisasmFunc{{
		Name: "count", Calls: 1,
		Insts: []DisasmInst{
			{Addr: 0x1000, Text: "push %rbp", File: "/src/count.c", Line: 3, Block: true, Count: 1},
			{Addr: 0x1001, Text: "xor %eax,%eax", File: "/src/count.c", Line: 4},
			{Addr: 0x1003, Text: "jmp 0x103c", File: "/src/count.c", Line: 6, Out: []DisasmEdge{{Kind: "taken", To: 0x103c, Count: 1}}},
			{Addr: 0x103c, Text: "cmp %esi,%edx", File: "/src/count.c", Line: 6, Block: true, Count: 11},
			{Addr: 0x1040, Text: "jl 0x1010", File: "/src/count.c", Line: 6, Out: []DisasmEdge{{Kind: "taken", To: 0x1010, Count: 10}, {Kind: "fallthrough", To: 0x1042, Count: 1}}},
			{Addr: 0x1042, Text: "ret", File: "/src/missing.c", Line: 2, Block: true, Count: 1},
		},
	}}
	var buf bytes.Buffer
	if err := WriteDisasm(&buf, fns, Options{ReadFile: blocksReadFile, Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "blocks/disasm.golden", buf.String())
}

// TestBlocksDisasmTimeGolden: with sampled time, each block's count has
// its share, time per execution and samples beside it; a block of fewer
// than 25 samples is marked ~, one without samples shows -.
func TestBlocksDisasmTimeGolden(t *testing.T) {
	fns := []DisasmFunc{{
		Name: "count", Calls: 1, TotalSamples: 400,
		Insts: []DisasmInst{
			{Addr: 0x1000, Text: "push %rbp", File: "/src/count.c", Line: 3, Block: true, Count: 1},
			{Addr: 0x1001, Text: "xor %eax,%eax", File: "/src/count.c", Line: 4},
			{Addr: 0x1003, Text: "jmp 0x103c", File: "/src/count.c", Line: 6, Out: []DisasmEdge{{Kind: "taken", To: 0x103c, Count: 1}}},
			{Addr: 0x103c, Text: "cmp %esi,%edx", File: "/src/count.c", Line: 6, Block: true, Count: 1000000, Samples: 300, TimeNS: 300_000_000},
			{Addr: 0x1040, Text: "jl 0x1010", File: "/src/count.c", Line: 6, Out: []DisasmEdge{{Kind: "taken", To: 0x1010, Count: 999999}, {Kind: "fallthrough", To: 0x1042, Count: 1}}},
			{Addr: 0x1042, Text: "ret", File: "/src/missing.c", Line: 2, Block: true, Count: 1, Samples: 2, TimeNS: 2_000_000},
		},
	}}
	var buf bytes.Buffer
	if err := WriteDisasm(&buf, fns, Options{ReadFile: blocksReadFile, Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "blocks/disasm_time.golden", buf.String())
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		n, total uint64
		want     string
	}{{0, 10, "0%"}, {10, 10, "100%"}, {1, 1000, "1%"}, {999, 1000, "99%"}, {5, 10, "50%"}, {2, 3, "67%"},
		// Counts whose n*200 does not fit in 64 bits (issue 12).
		{1 << 62, 1 << 63, "50%"}, {math.MaxUint64 / 3, math.MaxUint64, "33%"}, {math.MaxUint64 - 1, math.MaxUint64, "99%"},
		{1, math.MaxUint64, "1%"}, {math.MaxUint64, math.MaxUint64, "100%"}} {
		if got := percent(tc.n, tc.total); got != tc.want {
			t.Errorf("percent(%d, %d) = %s, want %s", tc.n, tc.total, got, tc.want)
		}
	}
}
