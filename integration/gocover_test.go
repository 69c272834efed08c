//go:build linux

package integration

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gocoverHuge is how many times testdata/gocover calls huge: workers*rounds*
// (hugeDepth+1), by its own constants.
const gocoverHuge = 4 * 5 * (40 + 1)

// TestGoCoverFuncs holds patchprof's function counts on a Go program to Go's
// own coverage counters (go build -cover; -covermode=atomic, because
// -covermode=count's plain increments lose counts when goroutines run the
// same function at once: it once counted 818 calls of 820). The program has
// functions with no frame and with small, large (up to 4 KiB) and huge (over
// 4 KiB) frames, each form of Go's stack-check prologue, and recurses on
// fresh goroutines so that the stack grows many times: the morestack call
// re-runs the prologue, and an entry site inside it would count those calls
// twice. Built with default flags and with -N -l.
func TestGoCoverFuncs(t *testing.T) {
	needsGo(t)
	t.Parallel()
	oracle := goCoverCalls(t, "gocover")
	if got := oracle["main.huge"]; got != gocoverHuge {
		t.Fatalf("the cover oracle counts main.huge %d times, want %d: testdata/gocover changed?", got, gocoverHuge)
	}
	src := filepath.Join(testdataDir, "gocover", "main.go")
	for _, build := range []struct {
		name  string
		flags []string
	}{
		{"default", nil},
		{"-N -l", []string{"-gcflags=all=-N -l"}},
	} {
		t.Run(build.name, func(t *testing.T) {
			t.Parallel()
			exe := buildGo(t, "gocover", build.flags...)
			res, p := runProfile(t, runOpts{args: []string{"--funcs", exe}})
			wantExitCode(t, res, p, 0)
			if want := fmt.Sprintf("huge %d sum ", gocoverHuge); !strings.HasPrefix(res.stdout, want) {
				t.Errorf("target's stdout %q, want it to start %q", res.stdout, want)
			}
			for name, want := range oracle {
				wantFunc(t, p, name, want)
			}
			wantFunc(t, p, "main.huge", gocoverHuge)

			// The lines of huge alone (all of them would cost the classic
			// engine tens of seconds). A statement of its body, and the line
			// of its func keyword (where the entry site is, past the
			// prologue), are entered once per call, as gcov counts a
			// function's opening line. Loop headers and lines with calls are
			// left out: how often they are entered depends on the code
			// layout the flags choose.
			res, p = runProfile(t, runOpts{args: []string{"--lines", "--func", `^main\.huge$`, exe}})
			wantExitCode(t, res, p, 0)
			wantLine(t, p, "main.go", markerLineIn(t, src, "HUGE_BODY"), gocoverHuge)
			wantLine(t, p, "main.go", funcLine(t, src, "huge"), gocoverHuge)
		})
	}
}

// goCoverCalls builds testdata/dir with -cover -covermode=atomic, runs it, and
// returns how many times each function of its main.go ran by the coverage
// counters: the count of the function's first block, the one starting at its
// body's opening brace. Functions are named as the Go toolchain names them
// (main.f, and main.f.funcN for f's Nth function literal).
func goCoverCalls(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	exe := buildGo(t, dir, "-cover", "-covermode=atomic")
	covDir := t.TempDir()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "GOCOVERDIR="+covDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s (built with -cover): %v\n%s", exe, err, out)
	}
	txt := filepath.Join(t.TempDir(), "cov.txt")
	if out, err := exec.Command("go", "tool", "covdata", "textfmt", "-i", covDir, "-o", txt).CombinedOutput(); err != nil {
		t.Fatalf("go tool covdata textfmt -i %s: %v\n%s", covDir, err, out)
	}
	blocks := readCoverBlocks(t, txt, "main.go")

	src := filepath.Join(testdataDir, dir, "main.go")
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, src, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := make(map[string]int64)
	first := func(name string, body *ast.BlockStmt) {
		lbrace, rbrace := fset.Position(body.Lbrace), fset.Position(body.Rbrace)
		for _, b := range blocks {
			if b.line == lbrace.Line && b.col == lbrace.Column {
				calls[name] = b.count
				return
			}
		}
		t.Fatalf("%s: no coverage block starts at its opening brace, %s:%d:%d (body ends at line %d)", name, filepath.Base(src), lbrace.Line, lbrace.Column, rbrace.Line)
	}
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if fd.Recv != nil {
			t.Fatalf("%s: method %s: goCoverCalls names functions only", src, fd.Name.Name)
		}
		name := "main." + fd.Name.Name
		first(name, fd.Body)
		n := 0
		ast.Inspect(fd.Body, func(x ast.Node) bool {
			lit, ok := x.(*ast.FuncLit)
			if !ok {
				return true
			}
			n++
			first(fmt.Sprintf("%s.func%d", name, n), lit.Body)
			ast.Inspect(lit.Body, func(y ast.Node) bool {
				if _, ok := y.(*ast.FuncLit); ok {
					t.Fatalf("%s: a function literal inside one of %s's: goCoverCalls does not name those", src, name)
				}
				return true
			})
			return false
		})
	}
	return calls
}

// A coverBlock is one line of go tool covdata textfmt's output:
// file:line.col,endline.endcol statements count.
type coverBlock struct {
	line, col int
	count     int64
}

// readCoverBlocks reads the blocks of the file with base name base.
func readCoverBlocks(t *testing.T, path, base string) []coverBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []coverBlock
	s := bufio.NewScanner(f)
	for s.Scan() {
		text := s.Text()
		if strings.HasPrefix(text, "mode: ") {
			continue
		}
		// target/main.go:33.22,35.2 1 1020
		loc, rest, ok := strings.Cut(text, ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 3 {
			t.Fatalf("%s: unexpected line %q", path, text)
		}
		if filepath.Base(loc) != base {
			continue
		}
		start, _, _ := strings.Cut(fields[0], ",")
		l, c, _ := strings.Cut(start, ".")
		var b coverBlock
		var err1, err2, err3 error
		b.line, err1 = strconv.Atoi(l)
		b.col, err2 = strconv.Atoi(c)
		b.count, err3 = strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: unexpected line %q", path, text)
		}
		blocks = append(blocks, b)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatalf("%s: no coverage blocks of %s", path, base)
	}
	return blocks
}

// funcLine is the line of the func keyword declaring name in the Go source
// at path.
func funcLine(t *testing.T, path, name string) int {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == name {
			return fset.Position(fd.Pos()).Line
		}
	}
	t.Fatalf("%s: no func %s", path, name)
	return 0
}
