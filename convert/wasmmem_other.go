//go:build !linux

package convert

import "github.com/tetratelabs/wazero/experimental"

// wasmMemoryAllocator returns, off Linux, linear memories in Go slices grown
// by copying, as wazero's own allocation does.
func wasmMemoryAllocator() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		return &sliceMemory{buf: make([]byte, 0, capacity)}
	})
}
