package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/patchprof/patchprof/profile"
)

// maxSourceSize is the largest source file patchprof reads: a larger one
// is listed without its text, with a note.
const maxSourceSize = 64 << 20

// errNotRegular and errTooLarge are the reasons readRegular refuses a file.
var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("larger than the limit")
)

// A sourceFiles reads source files for the line model and every report,
// the one place patchprof reads them: only regular files (a FIFO would
// block the end of the run, /dev/zero never ends), of at most
// maxSourceSize bytes, each once. It remembers the files it refused, for
// the notes of the report. It is safe for concurrent use (interim reports
// render on their own goroutine).
type sourceFiles struct {
	mu      sync.Mutex
	read    map[string]sourceRead
	refused []string // notes, one per refused file, in the order met
}

type sourceRead struct {
	data []byte
	err  error
}

func newSourceFiles() *sourceFiles {
	return &sourceFiles{read: make(map[string]sourceRead)}
}

// ReadFile reads the source file name, as output.Options.ReadFile.
func (s *sourceFiles) ReadFile(name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.read[name]; ok {
		return r.data, r.err
	}
	data, err := readRegular(name, maxSourceSize)
	s.read[name] = sourceRead{data, err}
	switch {
	case errors.Is(err, errTooLarge):
		s.refused = append(s.refused, fmt.Sprintf("source %s is %v: listed without its text", name, cause(err)))
	case errors.Is(err, errNotRegular):
		s.refused = append(s.refused, fmt.Sprintf("source %s is %v: not read", name, cause(err)))
	}
	return data, err
}

// notes returns the notes of the files refused so far.
func (s *sourceFiles) notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.refused)
}

// withNotes returns p with notes added after its own (p is not changed).
func withNotes(p *profile.Profile, notes []string) *profile.Profile {
	if len(notes) == 0 {
		return p
	}
	q := *p
	q.Notes = append(slices.Clip(p.Notes), notes...)
	return &q
}

// readRegular reads the file name when it is a regular file of at most max
// bytes. The file is checked before it is opened (opening a device can
// have effects), opened without blocking (O_NONBLOCK: a file replaced by a
// FIFO in between opens at once) and checked again once open.
func readRegular(name string, max int64) ([]byte, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(name, st, max); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkRegular(name, st, max); err != nil {
		return nil, err
	}
	// A file that grows while it is read stops at max+1 bytes. The
	// buffer starts at the file's size (and room for the read that sees
	// its end): io.ReadAll's doubling from 512 bytes copied and cleared an
	// amalgamation's 9 MB several times over.
	var buf bytes.Buffer
	buf.Grow(int(min(st.Size(), max)) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > max {
		return nil, tooLarge(name, max)
	}
	return data, nil
}

func checkRegular(name string, st fs.FileInfo, max int64) error {
	switch {
	case !st.Mode().IsRegular():
		return &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (%s)", errNotRegular, profile.FileKind(st.Mode()))}
	case st.Size() > max:
		return tooLarge(name, max)
	}
	return nil
}

// tooLarge is the error of a file name larger than max bytes.
func tooLarge(name string, max int64) error {
	return &fs.PathError{Op: "read", Path: name, Err: sizeError(max)}
}

// A sizeError says that a file is larger than its limit, in bytes: "larger
// than 64 MiB". It is errTooLarge.
type sizeError int64

func (e sizeError) Error() string {
	switch max := int64(e); {
	case max >= 1<<20 && max%(1<<20) == 0:
		return fmt.Sprintf("larger than %d MiB", max>>20)
	case max >= 1<<10 && max%(1<<10) == 0:
		return fmt.Sprintf("larger than %d KiB", max>>10)
	}
	return fmt.Sprintf("larger than %d bytes", int64(e))
}

func (e sizeError) Is(target error) bool { return target == errTooLarge }
