// Package memstat measures a process's peak resident memory on Linux, for
// the benchmarks that check weights are streamed rather than held.
package memstat

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// PeakRSS returns the process's peak resident set size (VmHWM) in bytes.
func PeakRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/self/status: VmHWM: %w", err)
		}
		return kb << 10, nil
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/self/status has no VmHWM line")
}

// ResetPeak collects garbage, returns freed memory to the OS and lowers
// VmHWM to the current RSS (Linux's clear_refs 5), so that a following
// PeakRSS measures only what comes after.
func ResetPeak() error {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
