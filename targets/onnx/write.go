package onnx

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/internal/progress"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// pageSize aligns external-data offsets so runtimes can mmap them.
const pageSize = 4096

// Marshal serializes the model with every initializer inline
// (deterministic: the same model gives the same bytes).
func (m *Model) Marshal() ([]byte, error) {
	for _, pw := range m.weights {
		shape := pw.tensor.GetDims()
		data, err := weightBytes(pw.w, shape)
		if err != nil {
			return nil, err
		}
		pw.tensor.RawData = data
	}
	defer func() {
		for _, pw := range m.weights {
			pw.tensor.RawData = nil
		}
	}()
	return marshal(m.Proto)
}

func marshal(mp *pb.ModelProto) ([]byte, error) {
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(mp)
	if err != nil {
		return nil, fmt.Errorf("serializing ModelProto: %w", err)
	}
	if len(out) >= 2<<30-1 {
		return nil, fmt.Errorf("serialized model is %d bytes, over protobuf's 2 GiB limit: lower the external-data threshold", len(out))
	}
	return out, nil
}

// Write writes the model to path. Pending (large) initializers are streamed
// from their weight source into path+".data", each at a 4 KiB-aligned
// offset, and referenced as external data. Both files are written to
// temporaries and renamed into place (the .data first), so a failure leaves
// no partial output.
func (m *Model) Write(path string) error {
	if len(m.weights) == 0 {
		data, err := m.Marshal()
		if err != nil {
			return err
		}
		return atomicfile.WriteBytes(path, data)
	}
	sidecar := filepath.Base(path) + ".data"
	// The external-data references exist only while the model is written.
	defer func() {
		for _, pw := range m.weights {
			pw.tensor.ExternalData, pw.tensor.DataLocation = nil, nil
		}
	}()
	return atomicfile.WriteAll(
		atomicfile.File{Path: filepath.Join(filepath.Dir(path), sidecar), Write: func(w io.Writer) error {
			if m.OnWrite != nil {
				w = progress.Counter(w, func(n int64) { m.OnWrite(filepath.Join(filepath.Dir(path), sidecar), n) })
			}
			return m.writeExternalData(w, sidecar)
		}},
		atomicfile.File{Path: path, Write: func(w io.Writer) error {
			data, err := marshal(m.Proto)
			if err != nil {
				return err
			}
			_, err = w.Write(data)
			return err
		}},
	)
}

// writeExternalData streams the pending initializers into w (the file named
// sidecar) at 4 KiB-aligned offsets and points each tensor at its bytes.
func (m *Model) writeExternalData(w io.Writer, sidecar string) error {
	var off int64
	for _, pw := range m.weights {
		if pad := (pageSize - off%pageSize) % pageSize; pad > 0 {
			if _, err := w.Write(make([]byte, pad)); err != nil {
				return err
			}
			off += pad
		}
		n, err := streamWeight(w, pw)
		if err != nil {
			return err
		}
		loc := pb.TensorProto_EXTERNAL
		pw.tensor.DataLocation = &loc
		pw.tensor.ExternalData = []*pb.StringStringEntryProto{
			{Key: strPtr("location"), Value: strPtr(sidecar)},
			{Key: strPtr("offset"), Value: strPtr(strconv.FormatInt(off, 10))},
			{Key: strPtr("length"), Value: strPtr(strconv.FormatInt(n, 10))},
		}
		off += n
	}
	return nil
}

// streamWeight copies a weight's bytes into w; a contiguous weight is
// streamed from its source without buffering the whole tensor.
func streamWeight(w io.Writer, pw *pendingWeight) (int64, error) {
	shape := pw.tensor.GetDims()
	if isContiguous(shape, pw.w.Strides) {
		rc, err := pw.w.Source.Open()
		if err != nil {
			return 0, fmt.Errorf("weight %q: %w", pw.w.Name, err)
		}
		defer rc.Close()
		es := int64(pw.w.Type.DType.Size())
		if _, err := io.CopyN(io.Discard, rc, pw.w.StorageOffset*es); err != nil {
			return 0, fmt.Errorf("weight %q: %w", pw.w.Name, err)
		}
		n, err := io.CopyN(w, rc, pw.size)
		if err != nil {
			return n, fmt.Errorf("weight %q: %w", pw.w.Name, err)
		}
		return n, nil
	}
	data, err := weightBytes(pw.w, shape)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(data)
	return int64(n), err
}
