package fxtext

import "fmt"

// Error is a problem found in an FX text dump, located at a line and column
// (both 1-based) of the named file.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg) }

// pos is a position in the dump.
type pos struct{ line, col int }

// errAt builds an Error at p.
func errAt(file string, p pos, format string, args ...any) error {
	return &Error{File: file, Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
}
