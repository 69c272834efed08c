package profile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Save validates and sorts p and writes it to path as indented JSON. The
// write is atomic: the profile goes to a temporary file in the same
// directory, which is then renamed over path, so a reader never sees half a
// profile and an old file at path survives a failed save.
func (p *Profile) Save(path string) (err error) {
	data, err := p.marshal()
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return SaveEncoded(path, data)
}

// SaveEncoded writes data, a profile as Encode wrote it, to path as Save
// does: for a caller that keeps the encoding (to set it aside if the save
// fails) and need not encode a large profile twice.
func SaveEncoded(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				err = errors.Join(err, rerr)
			}
		}
	}()
	if _, err := f.Write(data); err != nil {
		return errors.Join(fmt.Errorf("save %s: %w", path, err), f.Close())
	}
	// CreateTemp makes the file 0600; a profile is an ordinary document.
	if err := f.Chmod(0o644); err != nil {
		return errors.Join(fmt.Errorf("save %s: %w", path, err), f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(fmt.Errorf("save %s: %w", path, err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// Load reads and validates the profile saved at path. Errors: the
// *os.PathError of a file that cannot be read; an error wrapping
// ErrNotRegular for a directory, FIFO or device, and ErrTooLarge for a file
// of more than MaxSize bytes; a *FormatError (with Path set) for bad JSON,
// a missing required field or a value that breaks the schema; an error
// wrapping ErrVersion, naming both versions, for a profile of another
// format version.
func Load(path string) (*Profile, error) {
	data, err := readRegular(path)
	if err != nil {
		return nil, err
	}
	return decode(data, path)
}

// readRegular reads the regular file at path, of at most MaxSize bytes.
func readRegular(path string) (data []byte, err error) {
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
	if fi.Size() > MaxSize {
		return nil, tooLarge(path, fi.Size())
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	if len(data) > MaxSize {
		return nil, tooLarge(path, int64(len(data)))
	}
	return data, nil
}

// tooLarge reports a file at path of size bytes, more than MaxSize.
func tooLarge(path string, size int64) error {
	return fmt.Errorf("%s: %w: %d MiB or more, and profiles are at most %d MiB: is it a profile saved with --save?",
		path, ErrTooLarge, size>>20, MaxSize>>20)
}

// checkRegular refuses anything but a regular file, naming what it is.
func checkRegular(path string, fi os.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "a special file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&os.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&os.ModeCharDevice != 0:
		what = "a character device"
	case m&os.ModeDevice != 0:
		what = "a block device"
	case m&os.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("%s is %s, %w: give the path of a profile saved with --save", path, what, ErrNotRegular)
}
