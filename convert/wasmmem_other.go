//go:build !linux

package convert

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// wasmMemoryAllocator returns, off Linux, linear memories in Go slices grown
// by copying, as wazero's own allocation does; they are in the Go heap, which
// the memory bound sees, so committed is not counted.
func wasmMemoryAllocator(committed *atomic.Int64) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		return &sliceMemory{buf: make([]byte, 0, capacity)}
	})
}
