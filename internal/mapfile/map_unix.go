//go:build unix

package mapfile

import (
	"os"
	"runtime"
	"syscall"
)

// load maps the file at path read-only, reporting whether it did (a file
// of no bytes, or one a file system cannot map, is read instead).
func load(path string) (data []byte, mapped bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	size := st.Size()
	if size == 0 || !st.Mode().IsRegular() || int64(int(size)) != size {
		data, err = os.ReadFile(path)
		return data, false, err
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		data, err = os.ReadFile(path)
		return data, false, err
	}
	return data, true, nil
}

// release arranges for f's mapping to be unmapped once f is garbage.
func release(f *File) {
	runtime.AddCleanup(f, func(b []byte) { syscall.Munmap(b) }, f.data)
}
