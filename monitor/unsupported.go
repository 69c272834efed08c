//go:build !(linux && amd64)

package monitor

import "errors"

// Run is only implemented on Linux x86-64: patchprof patches x86 machine code
// through ptrace.
func Run(o Options) (*Result, error) {
	return nil, errors.New("patchprof runs on Linux x86-64 only")
}
