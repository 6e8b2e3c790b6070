// Package npy reads and writes NumPy .npy files (format versions 1.0, 2.0
// and 3.0) as interpreter tensors: bool, signed and unsigned integers,
// float16/32/64 and complex64/128, little- or big-endian, C or Fortran
// order. numpy has no bfloat16; a tensor of it is written as float32.
package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/internal/inputfile"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

var magic = []byte("\x93NUMPY")

// ReadFile reads one .npy file.
func ReadFile(path string) (*interp.Tensor, error) {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// header is the parsed header dictionary.
type header struct {
	descr   string
	fortran bool
	shape   []int64
}

// Read decodes a .npy stream.
func Read(r io.Reader) (*interp.Tensor, error) {
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return nil, fmt.Errorf("npy: reading the magic string: %w", err)
	}
	if !bytes.Equal(pre[:6], magic) {
		return nil, errors.New("npy: not a .npy file (bad magic string)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		b := make([]byte, 2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("npy: reading the header length: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint16(b))
	case 2, 3:
		b := make([]byte, 4)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("npy: reading the header length: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint32(b))
		if hlen > 1<<24 {
			return nil, fmt.Errorf("npy: header of %d bytes is too large", hlen)
		}
	default:
		return nil, fmt.Errorf("npy: unsupported format version %d.%d", pre[6], pre[7])
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, fmt.Errorf("npy: reading the header: %w", err)
	}
	h, err := parseHeader(string(hb))
	if err != nil {
		return nil, fmt.Errorf("npy: header %q: %w", strings.TrimSpace(string(hb)), err)
	}
	dt, size, order, err := dtypeOf(h.descr)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	n := int64(1)
	for _, d := range h.shape {
		if d < 0 {
			return nil, fmt.Errorf("npy: negative dim in shape %v", h.shape)
		}
		n *= d
		if n > 1<<34 {
			return nil, fmt.Errorf("npy: shape %v is too large", h.shape)
		}
	}
	data := make([]byte, n*int64(size))
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("npy: reading %d elements of %s: %w", n, h.descr, err)
	}
	if order == binary.ByteOrder(binary.BigEndian) && size > 1 {
		swap(data, size, dt.IsComplex())
	}
	shape := h.shape
	if h.fortran && len(shape) > 1 {
		// Fortran order is the C order of the reversed shape, transposed.
		rev := make([]int64, len(shape))
		for i, d := range shape {
			rev[len(shape)-1-i] = d
		}
		t, err := interp.FromBytes(dt, rev, data)
		if err != nil {
			return nil, fmt.Errorf("npy: %w", err)
		}
		return reverseDims(t), nil
	}
	t, err := interp.FromBytes(dt, shape, data)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return t, nil
}

// reverseDims returns a contiguous copy of t with its dims reversed.
func reverseDims(t *interp.Tensor) *interp.Tensor {
	r := t.Rank()
	v := t.Alias()
	for i := 0; i < r; i++ {
		v.Shape[i], v.Strides[i] = t.Shape[r-1-i], t.Strides[r-1-i]
	}
	return v.Clone()
}

// swap reverses the bytes of each element (each part of a complex value).
func swap(data []byte, size int, cplx bool) {
	part := size
	if cplx {
		part = size / 2
	}
	for i := 0; i+part <= len(data); i += part {
		b := data[i : i+part]
		for l, h := 0, part-1; l < h; l, h = l+1, h-1 {
			b[l], b[h] = b[h], b[l]
		}
	}
}

func dtypeOf(descr string) (ir.DType, int, binary.ByteOrder, error) {
	if len(descr) < 2 {
		return 0, 0, nil, fmt.Errorf("bad dtype descr %q", descr)
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch descr[0] {
	case '<', '|', '=':
	case '>':
		order = binary.BigEndian
	default:
		return 0, 0, nil, fmt.Errorf("bad byte order in dtype descr %q", descr)
	}
	kinds := map[string]ir.DType{
		"b1": ir.Bool, "u1": ir.Uint8, "i1": ir.Int8, "i2": ir.Int16, "u2": ir.Uint16,
		"i4": ir.Int32, "u4": ir.Uint32, "i8": ir.Int64, "u8": ir.Uint64,
		"f2": ir.Float16, "f4": ir.Float32, "f8": ir.Float64, "c8": ir.Complex64, "c16": ir.Complex128,
	}
	dt, ok := kinds[descr[1:]]
	if !ok {
		return 0, 0, nil, fmt.Errorf("unsupported dtype %q", descr)
	}
	return dt, dt.Size(), order, nil
}

// parseHeader reads numpy's header, a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
func parseHeader(s string) (header, error) {
	var h header
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return h, errors.New("not a dict")
	}
	body := s[1 : len(s)-1]
	seen := map[string]bool{}
	for len(strings.TrimSpace(body)) > 0 {
		body = strings.TrimLeft(body, " ,")
		if body == "" {
			break
		}
		key, rest, err := pyString(body)
		if err != nil {
			return h, err
		}
		rest = strings.TrimLeft(rest, " ")
		if !strings.HasPrefix(rest, ":") {
			return h, fmt.Errorf("missing ':' after key %q", key)
		}
		rest = strings.TrimLeft(rest[1:], " ")
		switch key {
		case "descr":
			h.descr, rest, err = pyString(rest)
		case "fortran_order":
			switch {
			case strings.HasPrefix(rest, "True"):
				h.fortran, rest = true, rest[4:]
			case strings.HasPrefix(rest, "False"):
				rest = rest[5:]
			default:
				err = fmt.Errorf("fortran_order must be True or False")
			}
		case "shape":
			h.shape, rest, err = pyTuple(rest)
		default:
			err = fmt.Errorf("unknown key %q", key)
		}
		if err != nil {
			return h, err
		}
		seen[key] = true
		body = rest
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("missing key %q", k)
		}
	}
	return h, nil
}

func pyString(s string) (string, string, error) {
	if len(s) == 0 || (s[0] != '\'' && s[0] != '"') {
		return "", s, fmt.Errorf("expected a string at %q", trunc(s))
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", s, fmt.Errorf("unterminated string at %q", trunc(s))
	}
	return s[1 : 1+end], s[end+2:], nil
}

func pyTuple(s string) ([]int64, string, error) {
	if !strings.HasPrefix(s, "(") {
		return nil, s, fmt.Errorf("expected a tuple at %q", trunc(s))
	}
	end := strings.IndexByte(s, ')')
	if end < 0 {
		return nil, s, fmt.Errorf("unterminated tuple at %q", trunc(s))
	}
	shape := []int64{}
	for _, part := range strings.Split(s[1:end], ",") {
		part = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), "L"))
		if part == "" {
			continue
		}
		v, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			return nil, s, fmt.Errorf("bad dim %q in shape", part)
		}
		shape = append(shape, v)
	}
	return shape, s[end+1:], nil
}

func trunc(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// Write encodes t as a version 1.0 .npy stream (C order, little-endian).
// bfloat16 tensors are written as float32.
func Write(w io.Writer, t *interp.Tensor) error {
	if t.DType == ir.BFloat16 {
		t = t.To(ir.Float32)
	}
	descrs := map[ir.DType]string{
		ir.Bool: "|b1", ir.Uint8: "|u1", ir.Int8: "|i1", ir.Int16: "<i2", ir.Uint16: "<u2",
		ir.Int32: "<i4", ir.Uint32: "<u4", ir.Int64: "<i8", ir.Uint64: "<u8",
		ir.Float16: "<f2", ir.Float32: "<f4", ir.Float64: "<f8", ir.Complex64: "<c8", ir.Complex128: "<c16",
	}
	descr, ok := descrs[t.DType]
	if !ok {
		return fmt.Errorf("npy: dtype %s has no numpy equivalent", t.DType)
	}
	var dims []string
	for _, d := range t.Shape {
		dims = append(dims, strconv.FormatInt(d, 10))
	}
	shape := "(" + strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	shape += ")"
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	// Pad so that the data starts on a multiple of 64 bytes, header ending in '\n'.
	total := len(magic) + 2 + 2 + len(h) + 1
	h += strings.Repeat(" ", (64-total%64)%64) + "\n"
	if len(h) > 65535 {
		return fmt.Errorf("npy: header too long")
	}
	var b bytes.Buffer
	b.Write(magic)
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	b.Write(t.Bytes())
	_, err := w.Write(b.Bytes())
	return err
}

// WriteFile writes t to path, replacing it atomically (atomicfile: a
// failure or an interrupt never leaves a partly written .npy).
func WriteFile(path string, t *interp.Tensor) error {
	var b bytes.Buffer
	if err := Write(&b, t); err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, b.Bytes())
}
