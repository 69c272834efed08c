package profile

import (
	"cmp"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// A Source is a source file of the profiled code whose line table records
// a digest of the contents it was compiled from (DWARF 5 DW_LNCT_MD5), so
// that a report can tell a source changed since the build whatever its
// modification time.
type Source struct {
	// File is the absolute path of the source file, as Line.File names it.
	File string `json:"file"`
	// MD5 is the MD5 digest of its contents at the build, as 32 lowercase
	// hex digits.
	MD5 string `json:"md5"`
	// Module is the path of the module the entry belongs to; "" is the
	// profile's executable.
	Module string `json:"module,omitempty"`
}

// SourceMD5 returns the MD5 digest (32 lowercase hex digits) that module's
// line table records for file; ok is false when it records none.
func (p *Profile) SourceMD5(module, file string) (sum string, ok bool) {
	for _, s := range p.Sources {
		if s.Module == module && s.File == file {
			return s.MD5, true
		}
	}
	return "", false
}

// validateSources checks p.Sources, for Validate.
func (p *Profile) validateSources(modules map[string]bool) error {
	type key struct{ module, file string }
	seen := make(map[key]bool, len(p.Sources))
	for i, s := range p.Sources {
		field := "sources[" + strconv.Itoa(i) + "]"
		if err := checkModule(modules, field, s.Module); err != nil {
			return err
		}
		if s.File == "" {
			return badField(field+".file", "empty")
		}
		if b, err := hex.DecodeString(s.MD5); err != nil || len(b) != 16 || strings.ToLower(s.MD5) != s.MD5 {
			return badField(field+".md5", "%q: want 32 lowercase hex digits", clip(s.MD5))
		}
		k := key{s.Module, s.File}
		if seen[k] {
			return badField(field, "%q listed twice", s.File)
		}
		seen[k] = true
	}
	return nil
}

// sortSources puts p.Sources in module, then file order.
func (p *Profile) sortSources() {
	slices.SortStableFunc(p.Sources, func(a, b Source) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), strings.Compare(a.File, b.File))
	})
}
