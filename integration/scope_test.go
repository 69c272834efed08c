//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// startupRE matches a function-table row of a C start-up function.
var startupRE = regexp.MustCompile(`(?m)^ *\d+ +(_init|_start|_fini|frame_dummy|__do_global_dtors_aux|register_tm_clones|deregister_tm_clones)\b`)

// TestStartupFuncsLeftOut: the C start-up functions without source lines
// are left out of the function table, --top and the HTML page, with a note
// naming them; --all-funcs brings them back; the saved profile keeps them.
func TestStartupFuncsLeftOut(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	res, p := runProfile(t, runOpts{args: []string{"--funcs", exe}})
	if res.code != 0 {
		t.Fatalf("exit code %d\n%s", res.code, res)
	}
	if m := startupRE.FindAllString(res.stderr, -1); m != nil {
		t.Errorf("function table shows start-up functions %q\n%s", m, res)
	}
	if !regexp.MustCompile(`(?m)^ +1 +main +`).MatchString(res.stderr) {
		t.Errorf("function table lacks main\n%s", res)
	}
	note := regexp.MustCompile(`(?m)^note: left out: \d C start-up functions without source lines \(_init, .*\): --all-funcs shows them$`)
	if !note.MatchString(res.stderr) {
		t.Errorf("no note of the start-up functions left out\n%s", res)
	}
	saved := map[string]bool{}
	for _, f := range p.Functions {
		saved[f.Name] = true
	}
	for _, name := range []string{"_init", "_start", "frame_dummy", "__do_global_dtors_aux"} {
		if !saved[name] {
			t.Errorf("saved profile lacks %s", name)
		}
	}

	top := run(t, runOpts{args: []string{"--funcs", "--top", "3", exe}})
	if m := startupRE.FindAllString(top.stderr, -1); top.code != 0 || m != nil {
		t.Errorf("--top 3: exit %d, start-up functions %q\n%s", top.code, m, top)
	}
	all := run(t, runOpts{args: []string{"--funcs", "--all-funcs", exe}})
	if m := startupRE.FindAllString(all.stderr, -1); all.code != 0 || len(m) < 4 || note.MatchString(all.stderr) {
		t.Errorf("--all-funcs: exit %d, start-up functions %q; want them all and no note\n%s", all.code, m, all)
	}
	html := filepath.Join(dir, "r.html")
	if res := run(t, runOpts{args: []string{"--funcs", "--format", "html", "-o", html, exe}}); res.code != 0 {
		t.Fatalf("%s", res)
	}
	if page := readFile(t, html); strings.Contains(page, `<td class="name">frame_dummy</td>`) || !strings.Contains(page, `<td class="name">fib</td>`) {
		t.Errorf("HTML page: frame_dummy in the function table, or fib missing:\n%s", tail(page))
	}
}

// vectorCpp is a C++ program whose hot code is libstdc++'s std::vector
// (in /usr/include/c++) and a header of a vendored library of its own.
const vectorCpp = `#include <vector>
#include "vendor/lib.h"

int main()
{
	std::vector<int> v;
	for (int i = 0; i < 100; i++)
		v.push_back(twice(i));
	return v.size() == 100 ? 0 : 1;
}
`

// TestSystemSourcesLeftOut: the listing of a C++ program shows its own
// sources and its vendored library, not the libstdc++ headers it was
// compiled against (counted and saved; --all-files shows them).
func TestSystemSourcesLeftOut(t *testing.T) {
	needs(t)
	t.Parallel()
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "vendor"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"vec.cpp":      vectorCpp,
		"vendor/lib.h": "static inline int twice(int x)\n{\n\treturn 2 * x;\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := buildCFrom(t, filepath.Join(src, "vec.cpp"), "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--lines", exe}, dir: src})
	if res.code != 0 {
		t.Fatalf("exit code %d\n%s", res.code, res)
	}
	headers := regexp.MustCompile(`(?m)^/usr/include/c\+\+/\S+ +\d+ `)
	if headers.MatchString(res.stderr) {
		t.Errorf("listing shows libstdc++ headers\n%s", tail(res.stderr))
	}
	for _, row := range []string{`(?m)^vec\.cpp +8 +100: `, `(?m)^vendor/lib\.h +3 +100: `} {
		if !regexp.MustCompile(row).MatchString(res.stderr) {
			t.Errorf("listing lacks the row %s\n%s", row, tail(res.stderr))
		}
	}
	if !regexp.MustCompile(`(?m)^note: left out: \d+ source files? in system directories \(/usr/include\): --all-files shows them$`).MatchString(res.stderr) {
		t.Errorf("no note of the system sources left out\n%s", tail(res.stderr))
	}
	savedHeader := false
	for _, l := range p.Lines {
		savedHeader = savedHeader || strings.HasPrefix(l.File, "/usr/include/c++/")
	}
	if !savedHeader {
		t.Error("saved profile lacks the libstdc++ header lines")
	}
	save := filepath.Join(t.TempDir(), "p.json")
	if res := run(t, runOpts{args: []string{"--lines", "--save", save, "-o", "/dev/null", exe}}); res.code != 0 {
		t.Fatalf("%s", res)
	}
	all := run(t, runOpts{args: []string{"report", "--all-files", save}})
	if all.code != 0 || !headers.MatchString(all.stdout) {
		t.Errorf("report --all-files: exit %d, no libstdc++ header rows\n%s", all.code, tail(all.stdout))
	}
	info := filepath.Join(t.TempDir(), "r.info")
	if res := run(t, runOpts{args: []string{"report", "--format", "lcov", "-o", info, save}}); res.code != 0 {
		t.Fatalf("%s", res)
	}
	if text := readFile(t, info); strings.Contains(text, "SF:/usr/include") || !strings.Contains(text, "SF:"+filepath.Join(src, "vendor/lib.h")) {
		t.Errorf("lcov export: system headers in it, or the vendored header missing:\n%s", tail(text))
	}
}
