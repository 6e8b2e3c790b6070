package pytree

import "fmt"

// Error is a problem in a TreeSpec string, located by its JSON path:
// "$" is the whole document, "$[1].children_spec[0].context" the context of
// the root's first child. Inside a context that is itself JSON text, the path
// continues after "context" with the location in the decoded text:
// "$[1].context: $.s.layers[0].i".
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string { return e.Path + ": " + e.Msg }

func errorf(path, format string, args ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}
