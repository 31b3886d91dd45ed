// Package procmem trims the resident memory of the running process where the
// kernel's accounting makes it larger than the process needs: the pages of
// the vibe executable that start-up touched and later work does not.
package procmem
