//go:build !linux

package procmem

// ReleaseExecutablePages does nothing outside Linux, where the kernel's
// mapping of the executable is not known to inflate the resident set.
func ReleaseExecutablePages() (int64, error) { return 0, nil }
