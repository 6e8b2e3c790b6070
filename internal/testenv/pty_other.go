//go:build !linux

package testenv

import (
	"os"
	"testing"
)

// PTY opens a pseudo-terminal pair; this platform's is not implemented.
func PTY(t testing.TB) (master, slave *os.File) {
	t.Skip("testenv.PTY: pseudo-terminals are opened on Linux only")
	return nil, nil
}
