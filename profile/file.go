package profile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Save validates and sorts p and writes it to path as indented JSON,
// through ReplaceFile: a reader never sees half a profile, and an old file
// at path survives a failed save.
func (p *Profile) Save(path string) error {
	if err := ReplaceFile(path, p.Encode); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// ReplaceFile writes the regular file at path with write, the way patchprof
// writes every output file: write fills a temporary file in path's
// directory, which is synced and then renamed over path. A failure at any
// step (a full disk, a write that returns an error) removes the temporary
// file and leaves an old file at path as it was. A symbolic link at path is
// followed: the file it names is replaced, the link stays. The new file
// keeps the permissions of the file it replaces (0644 for a new one).
//
// The error is write's own, or the *fs.PathError (*os.LinkError for the
// rename) of the step that failed.
func ReplaceFile(path string, write func(io.Writer) error) (err error) {
	if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			path = target
		}
	}
	mode := fs.FileMode(0o644)
	if st, serr := os.Stat(path); serr == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err == nil {
			return
		}
		if !closed {
			f.Close() // the error that matters is err
		}
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600.
	if err := f.Chmod(mode); err != nil {
		return err
	}
	// The data reaches the disk before the name does: a crash after the
	// rename never leaves an empty file at path.
	if err := f.Sync(); err != nil {
		return err
	}
	closed = true
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Load reads and validates the profile saved at path, as a stream: the
// memory it takes follows the profile's content, not the file's size.
// Errors: the *os.PathError of a file that cannot be read; an error
// wrapping ErrNotRegular for a directory, FIFO, device or socket, refused
// before it is opened; a *FormatError (with Path set) for bad JSON, a
// missing required field or a value that breaks the schema; an error
// wrapping ErrVersion, naming both versions, for a profile of another
// format version.
func Load(path string) (p *Profile, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	// The file opened may not be the one Stat saw (replaced in between).
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	return decode(f, path)
}

// checkRegular refuses anything but a regular file, naming what it is.
func checkRegular(path string, fi os.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, %w: give the path of a profile saved with --save", path, FileKind(fi.Mode()), ErrNotRegular)
}

// FileKind names the type of a file that is not regular, for a message:
// "a directory", "a FIFO", "a character device", "a block device", "a
// socket", else "a special file".
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
