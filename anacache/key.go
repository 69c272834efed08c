package anacache

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// A Key names an entry: everything its payload depends on. Two keys are
// the same entry when all their fields are equal.
type Key struct {
	// Kind names the analysis and its payload's encoding ("lines",
	// "subprograms").
	Kind string
	// Self identifies the code that computed the payload: SelfID.
	Self string
	// File identifies the analysed file's contents: FileID.
	File string
	// Options are the analysis's options that change its result, in any
	// stable notation.
	Options string
}

// sum returns the key's digest: SHA-256 over its fields, each preceded by
// its length so that no two keys share an encoding.
func (k Key) sum() [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{k.Kind, k.Self, k.File, k.Options} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// FileID identifies the contents of the file at path for a Key: its ELF
// build ID (the linker's digest of its contents, given by the caller,
// symtab.File.BuildID) and its size, which tells a stripped or patched
// copy that kept the note from the original; without a build ID, its
// absolute path, size and modification time, which a rebuild changes.
func FileID(path, buildID string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("analysis cache: %w", err)
	}
	if buildID != "" {
		return fmt.Sprintf("build-id %s size %d", buildID, info.Size()), nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("analysis cache: %w", err)
	}
	return fmt.Sprintf("path %s size %d mtime %d", abs, info.Size(), info.ModTime().UnixNano()), nil
}

var self struct {
	once sync.Once
	id   string
}

// SelfID identifies the running program's code: the Go build ID of its
// executable (a digest of its inputs, which changes with any change to
// the code), else the GNU build ID, else the executable's FileID. An entry
// written by another build of patchprof is never read: its analysis may
// differ.
func SelfID() string {
	self.once.Do(func() { self.id = selfID() })
	return self.id
}

func selfID() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	if id := noteBuildID(exe); id != "" {
		return id
	}
	if id, err := FileID(exe, ""); err == nil {
		return id
	}
	return "unknown"
}

// noteBuildID returns the build ID note of the ELF file at path: Go's
// (.note.go.buildid) or, failing that, the GNU one, as the raw note.
// [ELF gABI, "Note Section"]
func noteBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, name := range []string{".note.go.buildid", ".note.gnu.build-id"} {
		if s := f.Section(name); s != nil {
			if data, err := s.Data(); err == nil && len(data) > 0 {
				return fmt.Sprintf("%s %x", name, data)
			}
		}
	}
	return ""
}
