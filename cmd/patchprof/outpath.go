package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/patchprof/patchprof/profile"
)

// An outKind says how an output path is written, hence what must hold
// before the target runs for the write to succeed at its end.
type outKind int

const (
	// outReplace is a file (-o, --save, merge -o): a regular file is replaced
	// by a rename after a complete write (profile.ReplaceFile), so its
	// directory must be writable; a special file (/dev/null, a FIFO) is
	// written in place.
	outReplace outKind = iota
	// outDir is a directory of files (--format gcov -o DIR), created if
	// missing.
	outDir
)

// stdStream returns the standard stream that path names, or nil: "-" is
// standard output everywhere, and /dev/stdout and /dev/stderr are the
// streams patchprof already holds. Opening /dev/stdout again would, when
// standard output is a regular file, truncate what the target wrote there.
func stdStream(path string, stderr io.Writer) io.Writer {
	switch path {
	case "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return os.Stdout
	case "/dev/stderr", "/dev/fd/2", "/proc/self/fd/2":
		return stderr
	}
	return nil
}

// checkOutput fails, before the target runs, when patchprof could not
// write path (given with flag) at the end of the run: a missing or
// read-only directory, a directory where a file is wanted or the reverse,
// an existing file it cannot open for writing. An existing file is tested
// itself (-o /dev/null needs /dev/null writable, not /dev).
func checkOutput(flag, path string, kind outKind) error {
	if path == "" {
		return nil
	}
	if stdStream(path, nil) != nil {
		if kind == outDir {
			return failed("%s %s: --format gcov writes one file per source: give a directory", flag, path)
		}
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && kind == outDir:
		if !st.IsDir() {
			return failed("%s %s is a file: --format gcov writes one file per source into a directory", flag, path)
		}
		if !writable(path) {
			return failed("%s %s: directory %s is not writable", flag, path, path)
		}
		return nil
	case err == nil && st.IsDir():
		return failed("%s %s is a directory: give a file name", flag, path)
	case err == nil && st.Mode().IsRegular():
		return checkDir(flag, path)
	case err == nil && st.Mode()&fs.ModeNamedPipe != 0:
		// Opening a FIFO for writing waits for a reader: test it without.
		if !writable(path) {
			return failed("%s %s is not writable", flag, path)
		}
		return nil
	case err == nil:
		// A device (/dev/null), written in place: open it for writing, as
		// the end of the run will.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return failed("%s %s is not writable: %v", flag, path, cause(err))
		}
		return f.Close()
	case errors.Is(err, fs.ErrNotExist) && kind == outDir:
		// MkdirAll creates it: the nearest existing ancestor decides.
		dir := filepath.Dir(path)
		for {
			if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
				break
			}
			dir = filepath.Dir(dir)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return failed("%s %s: %s is not a directory", flag, path, dir)
		}
		if !writable(dir) {
			return failed("%s %s: directory %s is not writable", flag, path, dir)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return checkDir(flag, path)
	}
	// ENOTDIR: a file where a directory should be; name it.
	for dir := filepath.Dir(path); filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return failed("%s %s: %s is not a directory", flag, path, dir)
		}
	}
	return failed("%s %s: %v", flag, path, cause(err))
}

// checkDir checks that a file can be created in path's directory.
func checkDir(flag, path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failed("%s %s: directory %s does not exist", flag, path, dir)
	case err != nil:
		return failed("%s %s: %v", flag, path, cause(err))
	case !st.IsDir():
		return failed("%s %s: %s is not a directory", flag, path, dir)
	case !writable(dir):
		return failed("%s %s: directory %s is not writable", flag, path, dir)
	}
	return nil
}

// A setAsideError reports output that could not be written where the user
// asked, and the temporary file it went to instead (none when that failed
// too). It is a failure of patchprof: exit status 125.
type setAsideError struct {
	what, path string // "the report", "-o r.txt"
	err        error  // the failed write
	aside      string // the temporary file holding the output, or ""
	asideErr   error  // why there is no temporary file
}

func (e *setAsideError) Error() string {
	if e.aside == "" {
		return fmt.Sprintf("cannot write %s to %s (%v), nor to a temporary file (%v): it is lost", e.what, e.path, e.err, e.asideErr)
	}
	return fmt.Sprintf("cannot write %s to %s (%v): it is in %s", e.what, e.path, e.err, e.aside)
}

func (e *setAsideError) Unwrap() error { return e.err }

// setAside writes, with write, the output that could not be written to
// path to a new file in $TMPDIR named after pattern (os.CreateTemp) and
// returns the error to report.
func setAside(what, path string, err error, pattern string, write func(io.Writer) error) error {
	e := &setAsideError{what: what, path: path, err: err}
	f, cerr := os.CreateTemp("", pattern)
	if cerr != nil {
		e.asideErr = cerr
		return e
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	werr := write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	if werr = errors.Join(werr, f.Close()); werr != nil {
		os.Remove(f.Name())
		e.asideErr = werr
		return e
	}
	e.aside = f.Name()
	return e
}

// deliver writes an output with write to path: a standard stream, an
// existing special file (a device, a FIFO) written in place, or a regular
// file replaced by a rename after a complete write (profile.ReplaceFile),
// so that a failed write (a full disk) leaves an old file as it was. The
// output then goes to a temporary file instead (setAside) named after
// pattern: write must be able to write it again.
func deliver(what, path string, write func(io.Writer) error, stderr io.Writer, pattern string) error {
	var err error
	if w := stdStream(path, stderr); w != nil {
		err = write(w)
	} else if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
		err = writeInPlace(path, write)
	} else {
		err = profile.ReplaceFile(path, write)
	}
	var fe *profile.FormatError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		// A profile that does not encode would fail again: nothing to set
		// aside.
		return failed("cannot save %s: %v", what, err)
	}
	return setAside(what, path, cause(err), pattern, write)
}

// writeInPlace writes to the special file at path with write.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return errors.Join(write(f), f.Close())
}

// cause is the error inside the *fs.PathError in err, whose path the
// message already names; err itself when it holds none.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openSink returns the writer path names when it is a standard stream or
// an existing special file (a terminal, /dev/null, a FIFO), which the
// listing is sized and coloured for; nil for a regular file. close
// releases what it opened.
func openSink(path string, stderr io.Writer) (w io.Writer, close func(), err error) {
	if w := stdStream(path, stderr); w != nil {
		return w, func() {}, nil
	}
	if st, err := os.Stat(path); err != nil || st.Mode().IsRegular() {
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, nil, failed("cannot write the report to %s: %v", path, cause(err))
	}
	return f, func() { f.Close() }, nil
}

// saveProfile writes p to path (--save, merge -o) as deliver does, as a
// stream: "-" and the standard streams get its JSON, a special file
// (/dev/null) is written in place, a regular file is replaced after a
// complete write. When that fails, the profile goes to a temporary file.
func saveProfile(p *profile.Profile, path string, stderr io.Writer) error {
	return deliver("the profile", path, p.Encode, stderr, "patchprof-profile-*.json")
}

// chunkSize is the size of a chunkBuffer's pieces.
const chunkSize = 1 << 20

// A chunkBuffer holds a rendered report in pieces of chunkSize bytes. A
// listing of the SQLite amalgamation is 32 MB: grown in one piece, each
// doubling copies what came before and faults in fresh pages (a fifth of
// `patchprof report` on it); in pieces, each byte is written once.
type chunkBuffer struct {
	full [][]byte // the pieces filled, in order
	cur  []byte   // the piece being filled, at most chunkSize bytes
}

// Write appends p; it never fails.
func (b *chunkBuffer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if b.cur == nil {
			// Whole from the start: grown by appends, a first piece
			// would be copied and faulted in twice over.
			b.cur = make([]byte, 0, chunkSize)
		}
		if len(b.cur) >= chunkSize {
			b.full = append(b.full, b.cur)
			b.cur = make([]byte, 0, chunkSize)
		}
		k := min(chunkSize-len(b.cur), len(p))
		b.cur = append(b.cur, p[:k]...)
		p = p[k:]
	}
	return n, nil
}

// Reset empties b, keeping its first piece for reuse.
func (b *chunkBuffer) Reset() {
	if len(b.full) > 0 {
		b.cur = b.full[0]
	}
	b.full, b.cur = nil, b.cur[:0]
}

// WriteTo writes b's bytes to w in order and returns the first error.
func (b *chunkBuffer) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, c := range append(b.full, b.cur) {
		k, err := w.Write(c)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// writeTo is WriteTo as deliver and setAside take it.
func (b *chunkBuffer) writeTo(w io.Writer) error {
	_, err := b.WriteTo(w)
	return err
}
