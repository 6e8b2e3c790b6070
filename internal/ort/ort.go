// Package ort runs ONNX models in ONNX Runtime from Go, for fxport's
// validation (fxport verify and the ONNX target's tests). It wraps
// github.com/yalue/onnxruntime_go behind a byte-oriented API: tensors travel
// as an ONNX element type, a shape and little-endian bytes, so callers need
// no cgo types.
//
// The shared library comes from the npm package onnxruntime-node@1.30.0,
// which `make ort` installs under third_party/ort, or the venv's onnxruntime;
// LibraryPath finds it there, next to the executable
// (or the file named by $FXPORT_ORT_LIB); Available reports whether it can be
// loaded, so tests can skip with a clear message when it is absent.
package ort

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	ortgo "github.com/yalue/onnxruntime_go"

	"github.com/fxport/fxport/internal/checkout"
)

// EnvLibrary names the environment variable that overrides the library path.
const EnvLibrary = "FXPORT_ORT_LIB"

// relLibrary is where `make ort` puts the library, relative to the module root.
func relLibrary() string {
	arch := "x64"
	if runtime.GOARCH == "arm64" {
		arch = "arm64"
	}
	return filepath.Join("third_party", "ort", "node_modules", "onnxruntime-node", "bin", "napi-v6", "linux", arch, "libonnxruntime.so.1")
}

// LibraryPath returns the ONNX Runtime shared library to load, the first
// that exists of: $FXPORT_ORT_LIB; libonnxruntime.so* next to the
// executable (or in ../lib); third_party/ort/… and the venv's
// onnxruntime/capi/libonnxruntime.so* under the nearest directory above
// the working directory or the executable that holds go.mod; and the
// active $VIRTUAL_ENV's onnxruntime. Its error names every place tried.
func LibraryPath() (string, error) {
	if p := os.Getenv(EnvLibrary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", EnvLibrary, err)
		}
		return p, nil
	}
	exe, _ := os.Executable()
	wd, _ := os.Getwd()
	return findLibrary(exe, wd, os.Getenv("VIRTUAL_ENV"))
}

// findLibrary searches the places LibraryPath lists, for an executable
// path, a working directory and a virtual environment ("" skips each).
func findLibrary(exe, wd, venv string) (string, error) {
	var tried []string
	try := func(globs ...string) string {
		for _, g := range globs {
			tried = append(tried, g)
			ms, _ := filepath.Glob(g)
			for _, m := range ms {
				if st, err := os.Stat(m); err == nil && !st.IsDir() {
					return m
				}
			}
		}
		return ""
	}
	venvLib := func(venv string) []string {
		return []string{filepath.Join(venv, "lib", "python3*", "site-packages", "onnxruntime", "capi", "libonnxruntime.so*")}
	}
	var globs []string
	if exe != "" {
		d := filepath.Dir(exe)
		globs = append(globs, filepath.Join(d, "libonnxruntime.so*"), filepath.Join(d, "..", "lib", "libonnxruntime.so*"))
	}
	for _, start := range []string{wd, filepath.Dir(exe)} {
		if root := checkout.Root(start); root != "" {
			globs = append(globs, filepath.Join(root, relLibrary()))
			globs = append(globs, venvLib(checkout.VenvDir(root))...)
		}
	}
	if venv != "" {
		globs = append(globs, venvLib(venv)...)
	}
	if p := try(globs...); p != "" {
		return p, nil
	}
	if len(tried) == 0 {
		tried = append(tried, "(no executable, working directory or virtual environment to search)")
	}
	return "", fmt.Errorf("ONNX Runtime library not found: set $%s to libonnxruntime.so, put it next to fxport, or install onnxruntime in a venv (`make venv` or `make ort` in a checkout); tried %v", EnvLibrary, tried)
}

var (
	initOnce sync.Once
	initErr  error
	runMu    sync.Mutex
)

// Init loads the library and creates the ONNX Runtime environment, once.
func Init() error {
	initOnce.Do(func() {
		p, err := LibraryPath()
		if err != nil {
			initErr = err
			return
		}
		ortgo.SetSharedLibraryPath(p)
		if err := ortgo.InitializeEnvironment(); err != nil {
			initErr = fmt.Errorf("initializing ONNX Runtime from %s: %w", p, err)
		}
	})
	return initErr
}

// Available reports whether ONNX Runtime can be used, and why not.
func Available() (bool, string) {
	if err := Init(); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// Tensor is a dense tensor: an ONNX TensorProto.DataType code, a shape and
// the elements as little-endian bytes in row-major order.
type Tensor struct {
	Name  string
	Type  int32
	Shape []int64
	Data  []byte
}

// ONNX element type codes the wrapper converts.
const (
	TypeFloat   = 1
	TypeUint8   = 2
	TypeInt8    = 3
	TypeUint16  = 4
	TypeInt16   = 5
	TypeInt32   = 6
	TypeInt64   = 7
	TypeBool    = 9
	TypeFloat16 = 10
	TypeDouble  = 11
	TypeUint32  = 12
	TypeUint64  = 13
	TypeBF16    = 16
)

// ElemSize is the byte size of one element of an ONNX type, 0 if unknown.
func ElemSize(t int32) int {
	switch t {
	case TypeBool, TypeUint8, TypeInt8:
		return 1
	case TypeUint16, TypeInt16, TypeFloat16, TypeBF16:
		return 2
	case TypeFloat, TypeInt32, TypeUint32:
		return 4
	case TypeInt64, TypeDouble, TypeUint64:
		return 8
	}
	return 0
}

// Numel is the element count of a shape.
func Numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// Float64s decodes the elements as float64 (bools and integers converted).
func (t *Tensor) Float64s() ([]float64, error) {
	n := int(Numel(t.Shape))
	sz := ElemSize(t.Type)
	if sz == 0 {
		return nil, fmt.Errorf("tensor %q: unsupported element type %d", t.Name, t.Type)
	}
	if len(t.Data) != n*sz {
		return nil, fmt.Errorf("tensor %q: %d bytes for %d elements of %d bytes", t.Name, len(t.Data), n, sz)
	}
	out := make([]float64, n)
	le := binary.LittleEndian
	for i := range out {
		b := t.Data[i*sz:]
		switch t.Type {
		case TypeFloat:
			out[i] = float64(math.Float32frombits(le.Uint32(b)))
		case TypeDouble:
			out[i] = math.Float64frombits(le.Uint64(b))
		case TypeBool, TypeUint8:
			out[i] = float64(b[0])
		case TypeInt8:
			out[i] = float64(int8(b[0]))
		case TypeInt16:
			out[i] = float64(int16(le.Uint16(b)))
		case TypeUint16:
			out[i] = float64(le.Uint16(b))
		case TypeInt32:
			out[i] = float64(int32(le.Uint32(b)))
		case TypeUint32:
			out[i] = float64(le.Uint32(b))
		case TypeInt64:
			out[i] = float64(int64(le.Uint64(b)))
		case TypeUint64:
			out[i] = float64(le.Uint64(b))
		case TypeFloat16:
			out[i] = float64(f16ToF32(le.Uint16(b)))
		case TypeBF16:
			out[i] = float64(math.Float32frombits(uint32(le.Uint16(b)) << 16))
		}
	}
	return out, nil
}

func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		f := float32(frac) / 1024 * float32(math.Pow(2, -14))
		if sign != 0 {
			return -f
		}
		return f
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}
