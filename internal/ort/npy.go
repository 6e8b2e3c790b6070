package ort

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

var (
	npyDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// ReadNPY reads a NumPy .npy file (format 1.0–3.0, little-endian or
// byte-sized C-order arrays) into a Tensor.
func ReadNPY(path string) (Tensor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Tensor{}, err
	}
	t, err := ParseNPY(data)
	if err != nil {
		return Tensor{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseNPY decodes the bytes of a .npy file.
func ParseNPY(data []byte) (Tensor, error) {
	if len(data) < 10 || !bytes.Equal(data[:6], []byte("\x93NUMPY")) {
		return Tensor{}, fmt.Errorf("not a .npy file (bad magic)")
	}
	var hlen, start int
	switch data[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(data[8:10])), 10
	case 2, 3:
		if len(data) < 12 {
			return Tensor{}, fmt.Errorf("truncated header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(data[8:12])), 12
	default:
		return Tensor{}, fmt.Errorf("unsupported .npy version %d", data[6])
	}
	if start+hlen > len(data) {
		return Tensor{}, fmt.Errorf("header length %d past end of file", hlen)
	}
	h := string(data[start : start+hlen])
	d, o, s := npyDescr.FindStringSubmatch(h), npyOrder.FindStringSubmatch(h), npyShape.FindStringSubmatch(h)
	if d == nil || o == nil || s == nil {
		return Tensor{}, fmt.Errorf("header %q lacks descr, fortran_order or shape", h)
	}
	if o[1] == "True" {
		return Tensor{}, fmt.Errorf("Fortran-order arrays are not supported")
	}
	typ, ok := map[string]int32{
		"<f4": TypeFloat, "<f8": TypeDouble, "<f2": TypeFloat16, "<i8": TypeInt64, "<i4": TypeInt32,
		"<i2": TypeInt16, "|i1": TypeInt8, "|u1": TypeUint8, "|b1": TypeBool, "<u2": TypeUint16,
		"<u4": TypeUint32, "<u8": TypeUint64,
	}[d[1]]
	if !ok {
		return Tensor{}, fmt.Errorf("unsupported dtype %q", d[1])
	}
	var shape []int64
	for _, f := range strings.Split(s[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 {
			return Tensor{}, fmt.Errorf("bad shape %q", s[1])
		}
		shape = append(shape, v)
	}
	body := data[start+hlen:]
	if want := int(Numel(shape)) * ElemSize(typ); len(body) != want {
		return Tensor{}, fmt.Errorf("%d data bytes, want %d for %s%v", len(body), want, d[1], shape)
	}
	return Tensor{Type: typ, Shape: shape, Data: append([]byte(nil), body...)}, nil
}
