package memstat

import "testing"

func TestPeakRSSSeesAnAllocation(t *testing.T) {
	if err := ResetPeak(); err != nil {
		t.Skipf("cannot reset the peak: %v", err)
	}
	before, err := PeakRSS()
	if err != nil {
		t.Skipf("no VmHWM: %v", err)
	}
	const n = 64 << 20
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	after, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if after-before < n/2 {
		t.Errorf("peak rose by %d bytes after touching %d", after-before, n)
	}
	_ = b[n-1]
}
