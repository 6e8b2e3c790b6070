package interp

import (
	"errors"
	"fmt"
)

// DomainError is an input outside an op's domain: an index out of bounds,
// an integer division by zero, a probability outside [0, 1], unsorted
// boundaries for bucketize, a failed runtime assertion. Torch raises (or
// leaves the result undefined) on such inputs; harnesses that draw random
// inputs use IsDomainError to draw others.
type DomainError struct{ Err error }

func (e *DomainError) Error() string { return e.Err.Error() }
func (e *DomainError) Unwrap() error { return e.Err }

func domainErrorf(format string, args ...any) error {
	return &DomainError{Err: fmt.Errorf(format, args...)}
}

// IsDomainError reports whether err is (or wraps) a *DomainError.
func IsDomainError(err error) bool {
	var d *DomainError
	return errors.As(err, &d)
}
