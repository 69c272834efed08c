//go:build !(linux && amd64)

package monitor

import (
	"errors"
	"runtime"
)

// An UnsupportedError is returned by every entry point of the package on a
// platform other than Linux x86-64: patchprof patches x86-64 machine code
// through ptrace. Saved profiles can still be rendered and merged anywhere.
type UnsupportedError struct {
	GOOS, GOARCH string
}

func (e *UnsupportedError) Error() string {
	return "patchprof runs and attaches to programs on Linux x86-64 only, not " + e.GOOS + "/" + e.GOARCH +
		": run it there, or use patchprof report and merge on profiles saved there"
}

// Unwrap makes errors.Is(err, errors.ErrUnsupported) true.
func (e *UnsupportedError) Unwrap() error { return errors.ErrUnsupported }

func unsupported() error { return &UnsupportedError{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH} }

// Run returns an *UnsupportedError: see the Linux x86-64 version.
func Run(o Options) (*Result, error) { return nil, unsupported() }

// CheckAttach returns an *UnsupportedError: see the Linux x86-64 version.
func CheckAttach(pid int) error { return unsupported() }
