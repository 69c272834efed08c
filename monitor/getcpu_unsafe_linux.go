//go:build linux

package monitor

import "unsafe"

// uintptrOf passes a pointer to a raw system call (getcpu(2)).
func uintptrOf(p *uint32) uintptr { return uintptr(unsafe.Pointer(p)) }
