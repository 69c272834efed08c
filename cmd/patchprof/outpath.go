package main

import (
	"bytes"
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
	// outFile is a file written in place (-o): an existing file must be
	// writable, a new one creatable in its directory.
	outFile outKind = iota
	// outReplace is a file replaced by a rename (--save, merge -o, so a
	// reader never sees half a profile): its directory must be writable.
	outReplace
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
	case err == nil && st.Mode().IsRegular() && kind == outReplace:
		return checkDir(flag, path)
	case err == nil && st.Mode()&fs.ModeNamedPipe != 0:
		// Opening a FIFO for writing waits for a reader: test it without.
		if !writable(path) {
			return failed("%s %s is not writable", flag, path)
		}
		return nil
	case err == nil:
		// A regular file written in place, or a device (/dev/null): open
		// it for writing, without truncating it, as the end of the run
		// will.
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

// setAside writes data, which could not be written to path, to a new file
// in $TMPDIR named after pattern (os.CreateTemp) and returns the error to
// report.
func setAside(what, path string, err error, pattern string, data []byte) error {
	e := &setAsideError{what: what, path: path, err: err}
	f, cerr := os.CreateTemp("", pattern)
	if cerr != nil {
		e.asideErr = cerr
		return e
	}
	_, werr := f.Write(data)
	if werr = errors.Join(werr, f.Close()); werr != nil {
		os.Remove(f.Name())
		e.asideErr = werr
		return e
	}
	e.aside = f.Name()
	return e
}

// deliver writes data, rendered completely beforehand, to path: a standard
// stream, an existing special file (a device, a FIFO), or a regular file
// created or truncated. A regular file whose write fails is removed, so no
// truncated report stays behind; the data then goes to a temporary file
// (setAside) named after pattern.
func deliver(what, path string, data []byte, stderr io.Writer, pattern string) error {
	if w := stdStream(path, stderr); w != nil {
		if _, err := w.Write(data); err != nil {
			return setAside(what, path, err, pattern, data)
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return setAside(what, path, cause(err), pattern, data)
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Close()); err != nil {
		if st, serr := os.Stat(path); serr == nil && st.Mode().IsRegular() {
			os.Remove(path)
		}
		return setAside(what, path, cause(err), pattern, data)
	}
	return nil
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

// saveProfile writes p to path (--save, merge -o): "-" and the standard
// streams get its JSON, a special file (/dev/null) is written in place, a
// regular file is replaced atomically (profile.Save). When that fails, the
// profile goes to a temporary file.
func saveProfile(p *profile.Profile, path string, stderr io.Writer) error {
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		return failed("cannot save the profile: %v", err)
	}
	st, err := os.Stat(path)
	if stdStream(path, stderr) != nil || (err == nil && !st.Mode().IsRegular()) {
		return deliver("the profile", path, buf.Bytes(), stderr, "patchprof-profile-*.json")
	}
	if err := profile.SaveEncoded(path, buf.Bytes()); err != nil {
		return setAside("the profile", path, cause(err), "patchprof-profile-*.json", buf.Bytes())
	}
	return nil
}
