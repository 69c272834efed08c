//go:build linux

package integration

// The pins of the real projects' differences from gcov
// (testdata/projects/PKG.txt): the source text each pin quotes, and the
// check that the differences found are exactly the pinned ones.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A sourceCache reads a project's source lines, once per file.
type sourceCache struct {
	root  string
	mu    sync.Mutex
	files map[string][]string
}

func newSourceCache(root string) *sourceCache {
	return &sourceCache{root: root, files: make(map[string][]string)}
}

// text is the trimmed source of a "FILE:LINE" key, "?" when unknown.
func (c *sourceCache) text(key string) string {
	i := strings.LastIndexByte(key, ':')
	line, err := strconv.Atoi(key[i+1:])
	if i < 0 || err != nil {
		return "?"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	lines, ok := c.files[key[:i]]
	if !ok {
		b, _ := os.ReadFile(filepath.Join(c.root, key[:i]))
		lines = strings.Split(string(b), "\n")
		c.files[key[:i]] = lines
	}
	if line < 1 || line > len(lines) {
		return "?"
	}
	return strings.TrimSpace(lines[line-1])
}

// projectKeyLess orders "FILE:LINE" keys by file, then line.
func projectKeyLess(a, b string) bool {
	ia, ib := strings.LastIndexByte(a, ':'), strings.LastIndexByte(b, ':')
	if a[:ia] != b[:ib] {
		return a[:ia] < b[:ib]
	}
	la, _ := strconv.Atoi(a[ia+1:])
	lb, _ := strconv.Atoi(b[ib+1:])
	return la < lb
}

// headerMark and headerLine2 are the header of a pins file, rewritten
// with it.
const (
	headerMark  = "# Pinned:"
	headerLine2 = `# FILE:LINE GCOV PATCHPROF ("-": no count), each after why.`
)

// checkProjectDiffs compares diffs ("FILE:LINE" -> "GCOV PATCHPROF", "-"
// for no count) with the pins in the file name, one "FILE:LINE GCOV
// PATCHPROF" per line ('#' starts a comment: each pin's why), and fails
// the test on every difference that is not pinned as it is and every pin
// that no longer differs. PATCHPROF_UPDATE_PROJECTS=1 rewrites the pins,
// keeping the comments before each.
func checkProjectDiffs(t *testing.T, name string, diffs map[string]string, text func(string) string) {
	t.Helper()
	keys := make([]string, 0, len(diffs))
	for k := range diffs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return projectKeyLess(keys[i], keys[j]) })
	old, err := os.ReadFile(name)
	if err != nil && !(os.IsNotExist(err) && os.Getenv("PATCHPROF_UPDATE_PROJECTS") != "") {
		t.Fatal(err)
	}
	known := make(map[string]string)
	comments := make(map[string][]string) // pin -> the comment lines above it
	var run []string
	for _, row := range strings.Split(string(old), "\n") {
		f := strings.Fields(row)
		if len(f) == 0 || strings.HasPrefix(row, headerMark) || row == headerLine2 {
			continue
		}
		if strings.HasPrefix(f[0], "#") || len(f) != 3 {
			run = append(run, row)
			continue
		}
		known[f[0]] = f[1] + " " + f[2]
		comments[f[0]] = run
		run = nil
	}
	if os.Getenv("PATCHPROF_UPDATE_PROJECTS") != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s's lines where patchprof's count differs from gcov's:\n%s\n",
			headerMark, strings.TrimSuffix(filepath.Base(name), ".txt"), headerLine2)
		for _, k := range keys {
			for _, c := range comments[k] {
				b.WriteString(c + "\n")
			}
			if len(comments[k]) == 0 {
				fmt.Fprintf(&b, "# %q\n", text(k))
			}
			fmt.Fprintf(&b, "%s %s\n", k, diffs[k])
		}
		for _, c := range run {
			b.WriteString(c + "\n")
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var bad []string
	for _, k := range keys {
		if pin, ok := known[k]; !ok {
			bad = append(bad, fmt.Sprintf("  %s %-60.60q gcov/patchprof %s: a new difference", k, text(k), diffs[k]))
		} else if pin != diffs[k] {
			bad = append(bad, fmt.Sprintf("  %s %-60.60q gcov/patchprof %s, pinned as %s", k, text(k), diffs[k], pin))
		}
	}
	for k, pin := range known {
		if _, ok := diffs[k]; !ok {
			bad = append(bad, fmt.Sprintf("  %s %-60.60q pinned as %s, now equal to gcov: remove the pin", k, text(k), pin))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d lines differ from the pins in %s (PATCHPROF_UPDATE_PROJECTS=1 rewrites them once checked):\n%s",
			len(bad), name, strings.Join(bad, "\n"))
	}
	t.Logf("%d differences from gcov, all pinned in %s", len(keys), name)
}
