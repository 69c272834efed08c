package output

import (
	"path"
	"path/filepath"
	"strings"
)

// source finds and reads the source of file, split into lines with tabs
// expanded. See the package documentation for the search order.
func (r *report) source(file string) ([]string, bool) {
	for _, name := range r.candidates(file) {
		data, err := r.opt.ReadFile(name)
		if err == nil {
			return splitSource(data), true
		}
	}
	return nil, false
}

// candidates lists the names to try for file, without repeats.
func (r *report) candidates(file string) []string {
	p := file
	for _, s := range r.opt.Subst {
		if q, ok := s.apply(file); ok {
			p = q
			break
		}
	}
	names := []string{p}
	rel := strings.TrimLeft(p, "/")
	base := path.Base(p)
	for _, dir := range r.opt.SourceDirs {
		if rel != "" {
			names = append(names, filepath.Join(dir, filepath.FromSlash(rel)))
		}
		if base != "/" && base != "." {
			names = append(names, filepath.Join(dir, base))
		}
	}
	var out []string
	seen := make(map[string]bool)
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// splitSource splits a source file into lines (a final newline does not
// start another line), drops a CR before each newline and expands tabs.
func splitSource(data []byte) []string {
	s := string(data)
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = expandTabs(strings.TrimSuffix(l, "\r"))
	}
	return lines
}

// tabStop is the tab width of the listing's source column.
const tabStop = 8

// expandTabs replaces each tab by the spaces up to the next tab stop,
// counting one column per rune (an invalid byte counts as one).
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, c := range s {
		if c == '\t' {
			n := tabStop - col%tabStop
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(c)
		col++
	}
	return b.String()
}
