package output

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Sources finds and reads source files the one way patchprof does: each
// Subst rule in order (the first that applies), then each SourceDirs entry
// (see the package documentation), reading each file once and keeping its
// lines with tabs expanded. The line model (profiler.Config.Source) and
// the reports share one, so a file is found and read once a run. It is
// safe for concurrent use.
type Sources struct {
	subst []Subst
	dirs  []string
	read  func(name string) ([]byte, error)

	mu   sync.Mutex
	text map[string]sourceText
}

type sourceText struct {
	lines []string
	ok    bool
	name  string // the candidate read
}

// NewSources returns the sources that o's Subst, SourceDirs and ReadFile
// describe.
func NewSources(o Options) *Sources {
	read := o.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	return &Sources{subst: o.Subst, dirs: o.SourceDirs, read: read, text: map[string]sourceText{}}
}

// Lines returns the source of file, split into lines with tabs expanded;
// ok is false when no candidate name can be read.
func (s *Sources) Lines(file string) (lines []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, seen := s.text[file]; seen {
		return t.lines, t.ok
	}
	var t sourceText
	for _, name := range s.candidates(file) {
		if data, err := s.read(name); err == nil {
			t = sourceText{splitSource(data), true, name}
			break
		}
	}
	s.text[file] = t
	return t.lines, t.ok
}

// Read returns the name file's source was read from (after --subst-path
// and --source-dir), "" when it was not read.
func (s *Sources) Read(file string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text[file].name
}

// MD5 returns the MD5 digest of the bytes of file's source, as 32
// lowercase hex digits, reading again the name Lines read it from; ok is
// false when it was not read or cannot be read again.
func (s *Sources) MD5(file string) (sum string, ok bool) {
	name := s.Read(file)
	if name == "" {
		return "", false
	}
	data, err := s.read(name)
	if err != nil {
		return "", false
	}
	d := md5.Sum(data)
	return hex.EncodeToString(d[:]), true
}

// reverseHex returns the hex digits of a digest with its bytes in reverse
// order. GNU as (2.40) stores the `md5 0x...` of a `.file` directive as a
// little-endian number, the digest's bytes reversed, where LLVM writes
// them in order (DW_LNCT_MD5 is a 16-byte digest [DWARF5 6.2.4.1]): a
// source matches in either order.
func reverseHex(h string) string {
	b, err := hex.DecodeString(h)
	if err != nil {
		return h
	}
	slices.Reverse(b)
	return hex.EncodeToString(b)
}

// source returns the source of file, through opt.Sources (made the first
// time when the caller gave none).
func (r *report) source(file string) ([]string, bool) {
	if r.opt.Sources == nil {
		r.opt.Sources = NewSources(*r.opt)
	}
	return r.opt.Sources.Lines(file)
}

// candidates lists the names to try for file, without repeats.
func (s *Sources) candidates(file string) []string {
	p := file
	for _, sb := range s.subst {
		if q, ok := sb.apply(file); ok {
			p = q
			break
		}
	}
	names := []string{p}
	rel := strings.TrimLeft(p, "/")
	base := path.Base(p)
	for _, dir := range s.dirs {
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

// staleSource notes that source file, as read for module, changed after
// the build, as gcov warns of a source newer than its notes file: the
// counts may fall on the wrong lines. The listing still shows them. When
// the module's line table recorded the file's MD5 (DWARF 5), the digest
// of the bytes read decides, whatever the modification times (a file
// restored with an old date, or touched but unchanged); else the file is
// stale when it is newer than the binary. Nothing is said when either
// cannot be read.
func (r *report) staleSource(file, module string) {
	name := r.opt.Sources.Read(file)
	binary := r.p.ModuleName(module)
	if name == "" || binary == "" {
		return
	}
	if want, ok := r.p.SourceMD5(module, file); ok {
		if got, ok := r.opt.Sources.MD5(file); ok && got != want && reverseHex(got) != want {
			r.extra = append(r.extra, fmt.Sprintf("source file %s differs from the one %s was built from (its DWARF MD5): the counts may fall on the wrong lines", name, binary))
		}
		return
	}
	src, err := os.Stat(name)
	if err != nil {
		return
	}
	bin, err := os.Stat(binary)
	if err != nil || !src.ModTime().After(bin.ModTime()) {
		return
	}
	r.extra = append(r.extra, fmt.Sprintf("source file %s is newer than %s: it changed after the build, and the counts may fall on the wrong lines", name, binary))
}
