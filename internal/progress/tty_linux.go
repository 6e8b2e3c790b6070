package progress

import (
	"os"
	"syscall"
	"unsafe"
)

// isTerminal asks the terminal driver for f's settings: only a terminal
// has them (a pipe, a file or /dev/null answers ENOTTY).
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
