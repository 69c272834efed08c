package mapfile

import (
	"fmt"
	"io"
	"runtime/debug"
)

// A File is the contents of a file, read through ReadAt.
type File struct {
	path string
	data []byte // the mapping, or the file read whole
}

// Open maps the file at path (Unix) or reads it whole (elsewhere).
func Open(path string) (*File, error) {
	data, mapped, err := load(path)
	if err != nil {
		return nil, err
	}
	f := &File{path: path, data: data}
	if mapped {
		release(f)
	}
	return f, nil
}

// Size returns the file's size when it was opened.
func (f *File) Size() int64 { return int64(len(f.data)) }

// A FaultError is a read that faulted: the file was cut short, or its
// storage failed, after it was mapped.
type FaultError struct {
	Path string
	Off  int64
	Err  any // what the runtime's fault panic said
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("read %s at offset %d: the file changed or could not be read while mapped: %v", e.Path, e.Off, e.Err)
}

// ReadAt implements io.ReaderAt.
func (f *File) ReadAt(p []byte, off int64) (n int, err error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", f.path, off)
	}
	if off >= int64(len(f.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n, fault := f.copyAt(p, off)
	switch {
	case fault != nil:
		return 0, &FaultError{Path: f.path, Off: off, Err: fault}
	case n < len(p):
		return n, io.EOF
	}
	return n, nil
}

// copyAt copies from the data at off into p, returning the bytes copied,
// or what the runtime said when the copy faulted.
func (f *File) copyAt(p []byte, off int64) (n int, fault any) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			n, fault = 0, r
		}
	}()
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	return copy(p, f.data[off:]), nil
}
