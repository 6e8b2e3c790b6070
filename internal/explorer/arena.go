package explorer

import (
	"fmt"
)

// The drawing of an arena: a plot area of plotW x plotH pixels right of a
// margin for the offset axis, below a title line.
const (
	plotW, plotH = 720, 220
	marginL      = 70
	marginT      = 10
	marginB      = 28
)

type arenaView struct {
	Arena
	W, H     int
	PlotW    int
	PlotH    int
	Left     int
	Top      int
	Bottom   int // y of the time axis
	Rects    []rect
	Peak     uint64
	PeakStep int
}

type rect struct {
	X, Y, W, H string
	Fill       string
	Title      string
}

// drawArena lays the arena out: instructions left to right, byte offsets
// top to bottom, one rectangle per tensor over its live range.
func drawArena(a Arena) arenaView {
	v := arenaView{Arena: a, W: marginL + plotW + 10, H: marginT + plotH + marginB, PlotW: plotW, PlotH: plotH,
		Left: marginL, Top: marginT, Bottom: marginT + plotH}
	steps := a.Steps
	if steps < 1 {
		steps = 1
	}
	size := a.Size
	for _, t := range a.Tensors {
		if e := t.Offset + t.Size; e > size {
			size = e
		}
	}
	if size == 0 {
		size = 1
	}
	live := make([]uint64, steps)
	for _, t := range a.Tensors {
		x0 := float64(t.First) / float64(steps) * plotW
		x1 := float64(t.Last+1) / float64(steps) * plotW
		y0 := float64(t.Offset) / float64(size) * plotH
		y1 := float64(t.Offset+t.Size) / float64(size) * plotH
		w, h := x1-x0, y1-y0
		if w < 1 {
			w = 1
		}
		if h < 1 {
			h = 1
		}
		v.Rects = append(v.Rects, rect{
			X: num(marginL + x0), Y: num(marginT + y0), W: num(w), H: num(h),
			Fill:  fmt.Sprintf("hsl(%d,65%%,60%%)", t.Value*47%360),
			Title: fmt.Sprintf("value %%%d: bytes [%d, %d), live at instructions %d..%d", t.Value, t.Offset, t.Offset+t.Size, t.First, t.Last),
		})
		for s := t.First; s <= t.Last && s < steps; s++ {
			if s >= 0 {
				live[s] += t.Size
			}
		}
	}
	for s, b := range live {
		if b > v.Peak {
			v.Peak, v.PeakStep = b, s
		}
	}
	return v
}

func num(f float64) string { return fmt.Sprintf("%.1f", f) }
