package onnx

import (
	"fmt"
	"io"

	"github.com/fxport/fxport/ir"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// DefaultExternalThreshold is the initializer size (bytes) from which Write
// moves data to the external-data sidecar.
const DefaultExternalThreshold = 1 << 20

// pendingWeight is an initializer whose bytes are read at write time.
type pendingWeight struct {
	tensor *pb.TensorProto
	w      *ir.Weight
	size   int64 // contiguous byte size
}

// initializer declares a weight as an initializer named by its FQN. Small
// weights are read now into raw_data; large ones stay pending so Write can
// stream them into external data, or inline them on Marshal.
func initializer(w *ir.Weight, opts Options) (*pb.TensorProto, *pendingWeight, error) {
	shape, ok := w.Type.StaticShape()
	if !ok {
		return nil, nil, fmt.Errorf("shape %s is not static", w.Type)
	}
	et, err := elemType(w.Type.DType)
	if err != nil {
		return nil, nil, err
	}
	name := w.Name
	tp := &pb.TensorProto{Name: &name, Dims: append([]int64{}, shape...), DataType: int32Ptr(int32(et))}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	size := n * int64(w.Type.DType.Size())
	thr := opts.ExternalThreshold
	if thr == 0 {
		thr = DefaultExternalThreshold
	}
	if thr > 0 && size >= thr {
		return tp, &pendingWeight{tensor: tp, w: w, size: size}, nil
	}
	data, err := weightBytes(w, shape)
	if err != nil {
		return nil, nil, err
	}
	tp.RawData = data
	return tp, nil, nil
}

// readSized reads everything rc yields, as io.ReadAll does, into a buffer
// of the size the source declares: io.ReadAll grows its buffer by doubling,
// which allocates about twice the weight in garbage and keeps up to twice
// its bytes alive in the slice returned.
func readSized(rc io.Reader, size int64) ([]byte, error) {
	if size <= 0 || size > 256<<20 {
		return io.ReadAll(rc)
	}
	buf := make([]byte, size)
	n, err := io.ReadFull(rc, buf)
	switch err {
	case nil:
	case io.EOF, io.ErrUnexpectedEOF:
		return buf[:n], nil
	default:
		return buf[:n], err
	}
	rest, err := io.ReadAll(rc) // more than declared: what io.ReadAll would return
	if len(rest) == 0 {
		return buf, err
	}
	return append(buf, rest...), err
}

// weightBytes reads a weight as contiguous little-endian bytes, honouring its
// strides and storage offset.
func weightBytes(w *ir.Weight, shape []int64) ([]byte, error) {
	if w.Source == nil {
		return nil, fmt.Errorf("weight %q has no data", w.Name)
	}
	rc, err := w.Source.Open()
	if err != nil {
		return nil, fmt.Errorf("weight %q: %w", w.Name, err)
	}
	defer rc.Close()
	raw, err := readSized(rc, w.Source.Size())
	if err != nil {
		return nil, fmt.Errorf("weight %q: reading %s: %w", w.Name, w.Source, err)
	}
	es := int64(w.Type.DType.Size())
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	if isContiguous(shape, w.Strides) {
		start, end := w.StorageOffset*es, (w.StorageOffset+n)*es
		if end > int64(len(raw)) {
			return nil, fmt.Errorf("weight %q: %d bytes in %s, need %d", w.Name, len(raw), w.Source, end)
		}
		return raw[start:end], nil
	}
	out := make([]byte, 0, n*es)
	idx := make([]int64, len(shape))
	for k := int64(0); k < n; k++ {
		off := w.StorageOffset
		for d := range idx {
			off += idx[d] * w.Strides[d]
		}
		if off < 0 || (off+1)*es > int64(len(raw)) {
			return nil, fmt.Errorf("weight %q: element at storage offset %d outside its %d bytes", w.Name, off, len(raw))
		}
		out = append(out, raw[off*es:(off+1)*es]...)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out, nil
}

func isContiguous(shape, strides []int64) bool {
	if strides == nil {
		return true
	}
	want := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] != 1 && strides[d] != want {
			return false
		}
		want *= shape[d]
	}
	return true
}

// literal materializes a constant_input literal.
func (b *Builder) literal(a ir.Arg, t ir.Type) (string, error) {
	switch a.Kind {
	case ir.ArgInt:
		return b.I64(a.Int), nil
	case ir.ArgBool:
		return b.Scalar(ir.Bool, float64(a.Int))
	case ir.ArgFloat:
		return b.Scalar(ir.Float32, a.Float)
	case ir.ArgList:
		if v, ok := constInts(a); ok {
			return b.I64s(v...), nil
		}
	}
	return "", fmt.Errorf("literal %s (%s) has no ONNX constant form", a, t)
}
