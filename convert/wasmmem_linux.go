//go:build linux

package convert

import (
	"sync/atomic"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// wasmMemoryAllocator backs each pdfium instance's linear memory with its
// own reservation of address space (mmap, PROT_NONE, the instance's memory
// bound long) whose pages are made usable as the module grows its memory.
// wazero's default grows a Go slice by copying it into a larger one: every
// growth touches the whole memory again, leaves the old copy to the garbage
// collector, and counts the linear memory in the Go heap, which lets the heap
// double that much before a collection. Here growing copies nothing, only
// the pages pdfium writes are resident, and Free returns them at once.
//
// committed counts the bytes made usable, for the memory bound of a
// conversion ([bounded]), which sees the Go heap only.
func wasmMemoryAllocator(committed *atomic.Int64) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		if max == 0 || max > 4<<30 {
			max = 4 << 30
		}
		buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
		if err != nil {
			// No address space to reserve: a Go slice, as wazero does.
			return &sliceMemory{}
		}
		return &mmapMemory{buf: buf, total: committed}
	})
}

// mmapMemory is a linear memory in a reserved mapping; the first committed
// bytes are readable and writable.
type mmapMemory struct {
	buf       []byte
	committed uint64
	total     *atomic.Int64 // the engine's committed bytes
}

// Reallocate implements experimental.LinearMemory: it makes the reservation
// usable up to size bytes (page-aligned by WebAssembly) and returns it
// without moving it; nil when size is past the reservation or the kernel
// refuses.
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	if size > m.committed {
		if err := syscall.Mprotect(m.buf[m.committed:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.total.Add(int64(size - m.committed))
		m.committed = size
	}
	return m.buf[:size:size]
}

// Free implements experimental.LinearMemory.
func (m *mmapMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.total.Add(-int64(m.committed))
		m.buf, m.committed = nil, 0
	}
}
