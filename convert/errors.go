package convert

import (
	"errors"
	"fmt"
	"io/fs"
)

// Sentinel errors, wrapped with the file name; check them with errors.Is.
var (
	ErrUnsupportedFormat = errors.New("unsupported format")
	ErrEmpty             = errors.New("empty file")
	ErrTooLarge          = errors.New("file too large")
	ErrZipBomb           = errors.New("container inflates too much (zip bomb?)")
	ErrDamaged           = errors.New("damaged file")
	ErrEncrypted         = errors.New("encrypted document")
	ErrNoText            = errors.New("no text layer")
	ErrTimeout           = errors.New("conversion took too long")
	ErrTooMuchMemory     = errors.New("conversion needs too much memory")
	ErrGarbled           = errors.New("garbled text")
	ErrWouldOverwrite    = errors.New("refusing to overwrite")
	// ErrTooDeep is a document whose elements nest deeper than its reader
	// goes (HTML: 512 open elements).
	ErrTooDeep = errors.New("nested too deep")

	errMissingEntry = errors.New("missing from the container")
)

// quotePathError rewrites an *fs.PathError with its path quoted (%q), so
// that a newline or control character in a file name cannot forge a line in
// a log; the underlying error stays wrapped (errors.Is(err,
// fs.ErrNotExist) still holds).
func quotePathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %q: %w", pe.Op, pe.Path, pe.Err)
	}
	return err
}
