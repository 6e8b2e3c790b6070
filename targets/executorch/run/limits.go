package run

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/fxport/fxport/ir"
)

// Default limits of a loaded method. A real model that needs more raises
// them (Options.MaxArenaBytes, Options.MaxTensorBytes; fxport run
// --max-arena-bytes, --max-tensor-bytes); docs/reliability.md lists them.
//
// The defaults (256 MiB each) refuse the genuine 1 KB
// djl_portable_expand_512mib_output.pte, whose plan asks for a 512 MiB
// arena (and the reference kernels a further 1 GiB of float64 storage),
// instead of letting a small untrusted file take gigabytes.
const (
	// DefaultMaxArenaBytes bounds the planned arenas' total size.
	DefaultMaxArenaBytes = 256 << 20
	// DefaultMaxTensorBytes bounds one tensor: a declared size, a
	// constant, an input, a result.
	DefaultMaxTensorBytes = 256 << 20
	// DefaultMaxInstructions bounds the instructions one chain runs in
	// one execution.
	DefaultMaxInstructions = 10_000_000
)

func (o Options) maxInstructions() int {
	if o.MaxInstructions > 0 {
		return o.MaxInstructions
	}
	return DefaultMaxInstructions
}

func (o Options) maxArenaBytes() int64 {
	if o.MaxArenaBytes > 0 {
		return o.MaxArenaBytes
	}
	return DefaultMaxArenaBytes
}

func (o Options) maxTensorBytes() int64 {
	if o.MaxTensorBytes > 0 {
		return o.MaxTensorBytes
	}
	return DefaultMaxTensorBytes
}

// tensorBytes is the byte size of a tensor of sizes and dt, refused when a
// size is negative or the product overflows or passes limit.
func tensorBytes(sizes []int64, dt ir.DType, limit int64) (int64, error) {
	empty := false
	for i, d := range sizes {
		if d < 0 {
			return 0, fmt.Errorf("sizes %v: dimension %d is negative", sizes, i)
		}
		empty = empty || d == 0
	}
	if empty {
		return 0, nil
	}
	n := uint64(dt.Size())
	for _, d := range sizes {
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, fmt.Errorf("sizes %v of %s overflow 64 bits", sizes, dt)
		}
		n = lo
	}
	if int64(n) > limit {
		return 0, fmt.Errorf("sizes %v of %s need %d bytes, over the %d-byte tensor limit (raise it with --max-tensor-bytes)", sizes, dt, n, limit)
	}
	return int64(n), nil
}
