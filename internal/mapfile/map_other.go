//go:build !unix

package mapfile

import "os"

// load reads the file at path whole: no mapping here.
func load(path string) (data []byte, mapped bool, err error) {
	data, err = os.ReadFile(path)
	return data, false, err
}

// release is never called without a mapping.
func release(*File) {}
