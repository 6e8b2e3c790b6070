package executorch_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// Synthetic programs for the ExecuTorch scaling benchmarks (bench_test.go):
// a transformer-like stack and a CNN-like stack, written as IR text with
// static shapes and one distinct set of weights per block. The weights get
// lazy synthSources after parsing, so a 100k-node program holds no weight
// bytes until a pass or the writer asks for them.

// Transformer block: pre-norm decoder layer over x: f32[1, synthSeq,
// synthHidden] with two heads; synthTransformerNodes IR nodes per block.
const (
	synthSeq              = 8
	synthHidden           = 16
	synthFFN              = 32
	synthTransformerNodes = 35
)

// CNN block: conv → batch norm → relu → conv → batch norm → add (residual)
// → relu over f32[1, synthChannels, synthSpatial, synthSpatial];
// synthCNNNodes IR nodes per block.
const (
	synthChannels = 4
	synthSpatial  = 8
	synthCNNNodes = 7
)

// synthSource yields n bytes of float32 values in [0.25, 0.5), fixed by id
// (a splitmix64 stream): positive, so batch-norm variances are valid, and
// distinct per weight, so constant deduplication finds nothing to merge.
type synthSource struct{ n, id int64 }

func (s synthSource) Size() int64    { return s.n }
func (s synthSource) String() string { return fmt.Sprintf("synth(%d, id=%d)", s.n, s.id) }
func (s synthSource) Open() (io.ReadCloser, error) {
	return io.NopCloser(&synthReader{id: uint64(s.id), left: s.n}), nil
}

type synthReader struct {
	id, word uint64
	left     int64
	tail     []byte
}

func synthMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (r *synthReader) Read(b []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), r.left)]
	n := copy(b, r.tail)
	r.tail = r.tail[n:]
	for n < len(b) {
		var w [4]byte
		v := 0.25 + float32(synthMix(r.id<<32^r.word)%256)/1024
		binary.LittleEndian.PutUint32(w[:], math.Float32bits(v))
		r.word++
		k := copy(b[n:], w[:])
		r.tail = w[k:]
		n += k
	}
	r.left -= int64(n)
	return n, nil
}

// synthText accumulates the header and graph of a synthetic program.
type synthText struct {
	head, params, body strings.Builder
}

// weight declares a weight (no source: synthProgram attaches one) and the
// placeholder that reads it.
func (s *synthText) weight(name, kind string, shape ...int) string {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	ph := "p_" + strings.ReplaceAll(name, ".", "_")
	switch kind {
	case "buffer":
		fmt.Fprintf(&s.head, "input %s: buffer %q persistent\n", ph, name)
	default:
		fmt.Fprintf(&s.head, "input %s: parameter %q\n", ph, name)
	}
	t := "f32[" + strings.Join(dims, ", ") + "]"
	fmt.Fprintf(&s.body, "weight %q: %s\n", name, t)
	fmt.Fprintf(&s.params, "%%%s: %s, ", ph, t)
	return "%" + ph
}

// program assembles the text: header, weights, then the graph.
func (s *synthText) program(input, nodes, out string) string {
	var b strings.Builder
	b.WriteString(s.head.String())
	b.WriteString("input x: user_input\noutput user_output\n")
	b.WriteString(s.body.String())
	fmt.Fprintf(&b, "graph forward(%s%%x: %s) {\n%s  return %%%s\n}\n", s.params.String(), input, nodes, out)
	return b.String()
}

// transformerText is blocks pre-norm decoder layers with their own weights.
func transformerText(blocks int) string {
	var s synthText
	var g strings.Builder
	T, H, F, D := synthSeq, synthHidden, synthFFN, synthHidden/2
	h := "x"
	for i := range blocks {
		w := func(n string, kind string, shape ...int) string {
			return s.weight("l"+strconv.Itoa(i)+"."+n, kind, shape...)
		}
		r := strings.NewReplacer(
			"$h", h, "$i", "_"+strconv.Itoa(i), "$T", strconv.Itoa(T), "$H", strconv.Itoa(H), "$F", strconv.Itoa(F), "$D", strconv.Itoa(D),
			"@ln1w", w("ln1.weight", "", H), "@ln1b", w("ln1.bias", "", H),
			"@qw", w("q.weight", "", H, H), "@qb", w("q.bias", "", H),
			"@kw", w("k.weight", "", H, H), "@kb", w("k.bias", "", H),
			"@vw", w("v.weight", "", H, H), "@vb", w("v.bias", "", H),
			"@ow", w("o.weight", "", H, H), "@ob", w("o.bias", "", H),
			"@ln2w", w("ln2.weight", "", H), "@ln2b", w("ln2.bias", "", H),
			"@fw", w("fc.weight", "", H, F), "@fb", w("fc.bias", "", F),
			"@pw", w("proj.weight", "", F, H), "@pb", w("proj.bias", "", H),
		)
		g.WriteString(r.Replace(`  %ln$i: f32[1, $T, $H], %ln$i_m: f32[1, $T, 1], %ln$i_r: f32[1, $T, 1] = aten.native_layer_norm.default(%$h, [$H], @ln1w, @ln1b, 1e-05)
  %x2d$i: f32[$T, $H] = aten.view.default(%ln$i, [$T, $H])
  %q$i: f32[$T, $H] = aten.addmm.default(@qb, %x2d$i, @qw)
  %k$i: f32[$T, $H] = aten.addmm.default(@kb, %x2d$i, @kw)
  %v$i: f32[$T, $H] = aten.addmm.default(@vb, %x2d$i, @vw)
  %q4$i: f32[1, $T, 2, $D] = aten.view.default(%q$i, [1, $T, 2, $D])
  %qp$i: f32[1, 2, $T, $D]{0,2,1,3} = aten.permute.default(%q4$i, [0, 2, 1, 3])
  %qc$i: f32[1, 2, $T, $D] = aten.clone.default(%qp$i, memory_format=torch.contiguous_format)
  %q3$i: f32[2, $T, $D] = aten.view.default(%qc$i, [2, $T, $D])
  %k4$i: f32[1, $T, 2, $D] = aten.view.default(%k$i, [1, $T, 2, $D])
  %kp$i: f32[1, 2, $D, $T]{0,3,1,2} = aten.permute.default(%k4$i, [0, 2, 3, 1])
  %kc$i: f32[1, 2, $D, $T] = aten.clone.default(%kp$i, memory_format=torch.contiguous_format)
  %k3$i: f32[2, $D, $T] = aten.view.default(%kc$i, [2, $D, $T])
  %v4$i: f32[1, $T, 2, $D] = aten.view.default(%v$i, [1, $T, 2, $D])
  %vp$i: f32[1, 2, $T, $D]{0,2,1,3} = aten.permute.default(%v4$i, [0, 2, 1, 3])
  %vc$i: f32[1, 2, $T, $D] = aten.clone.default(%vp$i, memory_format=torch.contiguous_format)
  %v3$i: f32[2, $T, $D] = aten.view.default(%vc$i, [2, $T, $D])
  %sc$i: f32[2, $T, $T] = aten.bmm.default(%q3$i, %k3$i)
  %sd$i: f32[2, $T, $T] = aten.div.Tensor(%sc$i, 2.8284271247461903)
  %sm$i: f32[2, $T, $T] = aten._softmax.default(%sd$i, -1, False)
  %o$i: f32[2, $T, $D] = aten.bmm.default(%sm$i, %v3$i)
  %o4$i: f32[1, 2, $T, $D] = aten.view.default(%o$i, [1, 2, $T, $D])
  %op$i: f32[1, $T, 2, $D]{0,2,1,3} = aten.permute.default(%o4$i, [0, 2, 1, 3])
  %oc$i: f32[1, $T, 2, $D] = aten.clone.default(%op$i, memory_format=torch.contiguous_format)
  %o2$i: f32[$T, $H] = aten.view.default(%oc$i, [$T, $H])
  %pr$i: f32[$T, $H] = aten.addmm.default(@ob, %o2$i, @ow)
  %pr3$i: f32[1, $T, $H] = aten.view.default(%pr$i, [1, $T, $H])
  %r$i: f32[1, $T, $H] = aten.add.Tensor(%$h, %pr3$i)
  %lnb$i: f32[1, $T, $H], %lnb$i_m: f32[1, $T, 1], %lnb$i_r: f32[1, $T, 1] = aten.native_layer_norm.default(%r$i, [$H], @ln2w, @ln2b, 1e-05)
  %f2d$i: f32[$T, $H] = aten.view.default(%lnb$i, [$T, $H])
  %fc$i: f32[$T, $F] = aten.addmm.default(@fb, %f2d$i, @fw)
  %g$i: f32[$T, $F] = aten.gelu.default(%fc$i)
  %fp$i: f32[$T, $H] = aten.addmm.default(@pb, %g$i, @pw)
  %fp3$i: f32[1, $T, $H] = aten.view.default(%fp$i, [1, $T, $H])
  %h$i: f32[1, $T, $H] = aten.add.Tensor(%r$i, %fp3$i)
`))
		h = "h_" + strconv.Itoa(i)
	}
	return s.program(fmt.Sprintf("f32[1, %d, %d]", T, H), g.String(), h)
}

// cnnText is blocks residual blocks (two 3×3 convolutions with inference
// batch norms) with their own weights.
func cnnText(blocks int) string {
	var s synthText
	var g strings.Builder
	C, S := synthChannels, synthSpatial
	h := "x"
	for i := range blocks {
		w := func(n string, kind string, shape ...int) string {
			return s.weight("b"+strconv.Itoa(i)+"."+n, kind, shape...)
		}
		r := strings.NewReplacer(
			"$h", h, "$i", "_"+strconv.Itoa(i), "$C", strconv.Itoa(C), "$S", strconv.Itoa(S),
			"@w1", w("conv1.weight", "", C, C, 3, 3),
			"@g1", w("bn1.weight", "", C), "@b1", w("bn1.bias", "", C),
			"@m1", w("bn1.running_mean", "buffer", C), "@v1", w("bn1.running_var", "buffer", C),
			"@w2", w("conv2.weight", "", C, C, 3, 3),
			"@g2", w("bn2.weight", "", C), "@b2", w("bn2.bias", "", C),
			"@m2", w("bn2.running_mean", "buffer", C), "@v2", w("bn2.running_var", "buffer", C),
		)
		g.WriteString(r.Replace(`  %c1$i: f32[1, $C, $S, $S] = aten.convolution.default(%$h, @w1, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %n1$i: f32[1, $C, $S, $S], %n1$i_1: f32[0], %n1$i_2: f32[0] = aten._native_batch_norm_legit_no_training.default(%c1$i, @g1, @b1, @m1, @v1, 0.1, 1e-05)
  %a1$i: f32[1, $C, $S, $S] = aten.relu.default(%n1$i)
  %c2$i: f32[1, $C, $S, $S] = aten.convolution.default(%a1$i, @w2, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %n2$i: f32[1, $C, $S, $S], %n2$i_1: f32[0], %n2$i_2: f32[0] = aten._native_batch_norm_legit_no_training.default(%c2$i, @g2, @b2, @m2, @v2, 0.1, 1e-05)
  %s$i: f32[1, $C, $S, $S] = aten.add.Tensor(%n2$i, %$h)
  %h$i: f32[1, $C, $S, $S] = aten.relu.default(%s$i)
`))
		h = "h_" + strconv.Itoa(i)
	}
	return s.program(fmt.Sprintf("f32[1, %d, %d, %d]", C, S, S), g.String(), h)
}

// synthModel names a synthetic program generator and its nodes per block.
type synthModel struct {
	name     string
	text     func(blocks int) string
	perBlock int
	// portableMax caps the program size for executorch.portable (0: none):
	// the portable CNN emits about 7 values per IR node (every literal
	// argument is a value), so at 100k nodes its .pte holds more than the
	// 1,048,576 tables a FlatBuffers verifier accepts by default, and
	// pte.Write's read-back (like ExecuTorch's loader) refuses it.
	portableMax int
}

var synthModels = []synthModel{
	{"transformer", transformerText, synthTransformerNodes, 0},
	{"cnn", cnnText, synthCNNNodes, 50_000},
}

// sizeFor is nodes, capped by the model's portableMax for the portable
// pipeline.
func (m synthModel) sizeFor(backend string, nodes int) int {
	if backend == "executorch.portable" && m.portableMax > 0 {
		return min(nodes, m.portableMax)
	}
	return nodes
}

// synthProgram parses about nodes IR nodes of the model and gives every
// weight a lazy synthSource.
func synthProgram(tb testing.TB, m synthModel, nodes int) *ir.Program {
	tb.Helper()
	blocks := max(1, nodes/m.perBlock)
	p, err := ir.Parse([]byte(m.text(blocks)), "synthetic_"+m.name+".fxir")
	if err != nil {
		tb.Fatal(err)
	}
	for i, w := range p.Weights {
		shape, ok := w.Type.StaticShape()
		if !ok {
			tb.Fatalf("weight %q: dynamic shape", w.Name)
		}
		n := int64(4)
		for _, d := range shape {
			n *= d
		}
		w.Source = synthSource{n: n, id: int64(i)}
	}
	if err := ir.Verify(p); err != nil {
		tb.Fatal(err)
	}
	return p
}
