package run

import (
	"math"

	"github.com/fxport/fxport/ir"
)

func mustDT(s string) ir.DType {
	d, ok := ir.DTypeFromName(s)
	if !ok {
		panic(s)
	}
	return d
}

func float32FromBits(b uint32) float32 { return math.Float32frombits(b) }
