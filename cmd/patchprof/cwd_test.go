package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootCwdAbsolute: from the root directory, the listing shows file
// names as they are (absolute), not as tmp/... which reads as relative.
func TestRootCwdAbsolute(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	if err := os.WriteFile(src, []byte("int main(void)\n{\n\treturn 0;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(dir, "p.json")
	if err := os.WriteFile(saved, []byte(`{"version": 2, "executable": "/x", "args": ["x"], "mode": "lines",
		"exit": {"code": 0}, "lines": [{"file": "`+src+`", "line": 2, "count": 1}],
		"functions": [], "sites": []}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.txt")
	t.Chdir("/")
	var b strings.Builder
	if code := Main([]string{"report", "-o", out, saved}, &b); code != 0 {
		t.Fatalf("report: exit %d: %s", code, b.String())
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "\n"+src+" ") {
		t.Errorf("listing from / lacks the absolute name %s:\n%s", src, text)
	}
	if strings.Contains(string(text), "\n"+strings.TrimPrefix(src, "/")) {
		t.Errorf("listing from / shows %s without its leading slash:\n%s", src, text)
	}
}
