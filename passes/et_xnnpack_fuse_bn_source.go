package passes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
)

// BNFoldSource is a weight source that yields a convolution's weight or
// bias with an inference batch norm folded in (torch's
// fuse_conv_bn_weights): with scale[c] = gamma[c] / sqrt(var[c] + eps),
//
//	weight part: W'[…] = W[…] · scale[c(…)]   (c: the element's output channel)
//	bias part:   b'[c] = (b[c] − mean[c]) · scale[c] + beta[c]
//
// All tensors are contiguous little-endian float32; a missing conv bias is
// 0, a missing gamma 1 and a missing beta 0. The output channel of a
// weight element is its index along dim 0 of [O, I/g, k…], or, for a
// transposed convolution's [I, O/g, k…] weight, (i / (I/g))·(O/g) + j. The
// arithmetic is float64, rounded once to float32. Nothing is read until
// Open, which reads only the sources this part needs. Its IR spelling is
//
//	bn_fold(part="weight", shape=[8, 3, 7, 7], transposed=False, groups=1, eps=1e-05,
//	        weight="…", gamma="…", beta="…", mean="…", var="…")
//
// (part="bias" takes bias= instead of weight=; optional sources are
// omitted).
type BNFoldSource struct {
	Part       string  // "weight" or "bias"
	Shape      []int64 // the conv weight's shape (weight part) or [C] (bias part)
	Transposed bool
	Groups     int64
	Eps        float64
	// Weight is the conv weight (weight part only); Bias the conv bias
	// (bias part only, optional); Gamma and Beta the batch norm's affine
	// parameters (optional); Mean and Var its running statistics.
	Weight, Bias, Gamma, Beta, Mean, Var ir.WeightSource
}

func init() { ir.RegisterWeightSource("bn_fold", parseBNFoldSource) }

// channels is the number of output channels the fold scales.
func (s *BNFoldSource) channels() (int64, error) {
	if s.Part == "bias" {
		if len(s.Shape) != 1 {
			return 0, fmt.Errorf("bn_fold(...): bias shape %v is not a vector", s.Shape)
		}
		return s.Shape[0], nil
	}
	if len(s.Shape) < 2 || s.Groups < 1 {
		return 0, fmt.Errorf("bn_fold(...): weight shape %v with %d groups", s.Shape, s.Groups)
	}
	if s.Transposed {
		if s.Shape[0]%s.Groups != 0 {
			return 0, fmt.Errorf("bn_fold(...): %d input channels in %d groups", s.Shape[0], s.Groups)
		}
		return s.Groups * s.Shape[1], nil
	}
	return s.Shape[0], nil
}

func (s *BNFoldSource) check() error {
	switch s.Part {
	case "weight":
		if s.Weight == nil || s.Bias != nil {
			return fmt.Errorf("bn_fold(...): the weight part takes weight= and no bias=")
		}
	case "bias":
		if s.Weight != nil {
			return fmt.Errorf("bn_fold(...): the bias part takes no weight=")
		}
	default:
		return fmt.Errorf("bn_fold(...): part %q (want \"weight\" or \"bias\")", s.Part)
	}
	if s.Mean == nil || s.Var == nil {
		return fmt.Errorf("bn_fold(...): mean= and var= are required")
	}
	if !(s.Eps >= 0) || math.IsInf(s.Eps, 0) {
		return fmt.Errorf("bn_fold(...): eps %v", s.Eps)
	}
	c, err := s.channels()
	if err != nil {
		return err
	}
	for _, v := range []struct {
		name string
		src  ir.WeightSource
		n    int64
	}{{"bias", s.Bias, c}, {"gamma", s.Gamma, c}, {"beta", s.Beta, c}, {"mean", s.Mean, c}, {"var", s.Var, c}, {"weight", s.Weight, s.Size() / 4}} {
		if v.src != nil && v.src.Size() != 4*v.n {
			return fmt.Errorf("bn_fold(...): %s %s has %d bytes, want %d float32 values", v.name, v.src, v.src.Size(), v.n)
		}
	}
	return nil
}

// Size is the byte size of the folded tensor (float32).
func (s *BNFoldSource) Size() int64 {
	n := int64(4)
	for _, d := range s.Shape {
		n *= d
	}
	return n
}

// floats reads a float32 source; nil gives n copies of def.
func bnFoldFloats(name string, src ir.WeightSource, n int64, def float64) ([]float64, error) {
	out := make([]float64, n)
	if src == nil {
		for i := range out {
			out[i] = def
		}
		return out, nil
	}
	b, err := readSource("bn_fold", src)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != 4*n {
		return nil, fmt.Errorf("bn_fold(...): %s %s yielded %d bytes, want %d", name, src, len(b), 4*n)
	}
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return out, nil
}

// Open computes the folded tensor.
func (s *BNFoldSource) Open() (io.ReadCloser, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	c, _ := s.channels()
	gamma, err := bnFoldFloats("gamma", s.Gamma, c, 1)
	if err != nil {
		return nil, err
	}
	vr, err := bnFoldFloats("var", s.Var, c, 0)
	if err != nil {
		return nil, err
	}
	scale := make([]float64, c)
	for i := range scale {
		scale[i] = gamma[i] / math.Sqrt(vr[i]+s.Eps)
	}
	if s.Part == "bias" {
		bias, err := bnFoldFloats("bias", s.Bias, c, 0)
		if err != nil {
			return nil, err
		}
		beta, err := bnFoldFloats("beta", s.Beta, c, 0)
		if err != nil {
			return nil, err
		}
		mean, err := bnFoldFloats("mean", s.Mean, c, 0)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 4*c)
		for i := int64(0); i < c; i++ {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32((bias[i]-mean[i])*scale[i]+beta[i])))
		}
		return io.NopCloser(bytes.NewReader(out)), nil
	}
	b, err := readSource("bn_fold", s.Weight)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != s.Size() {
		return nil, fmt.Errorf("bn_fold(...): weight %s yielded %d bytes, want %d", s.Weight, len(b), s.Size())
	}
	numel := s.Size() / 4
	inner := numel / s.Shape[0] / s.Shape[1] // kernel elements
	for k := int64(0); k < numel; k++ {
		var ch int64
		if s.Transposed {
			i, j := k/(s.Shape[1]*inner), (k/inner)%s.Shape[1]
			ch = (i/(s.Shape[0]/s.Groups))*s.Shape[1] + j
		} else {
			ch = k / (s.Shape[1] * inner)
		}
		w := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:])))
		binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(float32(w*scale[ch])))
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (s *BNFoldSource) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "bn_fold(part=%s, shape=[", strconv.Quote(s.Part))
	for i, d := range s.Shape {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.FormatInt(d, 10))
	}
	tr := "False"
	if s.Transposed {
		tr = "True"
	}
	fmt.Fprintf(&sb, "], transposed=%s, groups=%d, eps=%s", tr, s.Groups, bnFoldFloat(s.Eps))
	for _, v := range []struct {
		name string
		src  ir.WeightSource
	}{{"weight", s.Weight}, {"bias", s.Bias}, {"gamma", s.Gamma}, {"beta", s.Beta}, {"mean", s.Mean}, {"var", s.Var}} {
		if v.src != nil {
			fmt.Fprintf(&sb, ", %s=%s", v.name, strconv.Quote(v.src.String()))
		}
	}
	sb.WriteString(")")
	return sb.String()
}

// bnFoldFloat spells f so that the IR parser reads it back as a float.
func bnFoldFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

func parseBNFoldSource(pos []ir.Arg, kw map[string]ir.Arg) (ir.WeightSource, error) {
	if len(pos) != 0 {
		return nil, fmt.Errorf("bn_fold(...) takes keyword arguments only")
	}
	s := &BNFoldSource{}
	for k, a := range kw {
		var err error
		switch k {
		case "part":
			if a.Kind != ir.ArgString {
				return nil, fmt.Errorf("bn_fold(...): part must be a string")
			}
			s.Part = a.Str
		case "shape":
			if a.Kind != ir.ArgList {
				return nil, fmt.Errorf("bn_fold(...): shape must be a list of ints")
			}
			for _, e := range a.List {
				if e.Kind != ir.ArgInt || e.Int < 1 {
					return nil, fmt.Errorf("bn_fold(...): shape must be a list of positive ints")
				}
				s.Shape = append(s.Shape, e.Int)
			}
		case "transposed":
			if a.Kind != ir.ArgBool {
				return nil, fmt.Errorf("bn_fold(...): transposed must be True or False")
			}
			s.Transposed = a.Bool()
		case "groups":
			if a.Kind != ir.ArgInt {
				return nil, fmt.Errorf("bn_fold(...): groups must be an int")
			}
			s.Groups = a.Int
		case "eps":
			switch a.Kind {
			case ir.ArgFloat:
				s.Eps = a.Float
			case ir.ArgInt:
				s.Eps = float64(a.Int)
			default:
				return nil, fmt.Errorf("bn_fold(...): eps must be a number")
			}
		case "weight", "bias", "gamma", "beta", "mean", "var":
			if a.Kind != ir.ArgString {
				return nil, fmt.Errorf("bn_fold(...): %s must be a source string", k)
			}
			var src ir.WeightSource
			if src, err = ir.ParseWeightSource(a.Str); err != nil {
				return nil, fmt.Errorf("bn_fold(...): %s: %w", k, err)
			}
			switch k {
			case "weight":
				s.Weight = src
			case "bias":
				s.Bias = src
			case "gamma":
				s.Gamma = src
			case "beta":
				s.Beta = src
			case "mean":
				s.Mean = src
			case "var":
				s.Var = src
			}
		default:
			return nil, fmt.Errorf("bn_fold(...): unknown argument %q", k)
		}
	}
	if _, ok := kw["groups"]; !ok {
		return nil, fmt.Errorf("bn_fold(...): missing groups")
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}
