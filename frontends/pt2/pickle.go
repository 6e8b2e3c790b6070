package pt2

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
)

// A reader for the subset of Python's pickle format that torch.save writes
// for state dicts and constant tables: dicts (OrderedDict included) of
// tensors rebuilt by torch._utils._rebuild_tensor_v2 / _rebuild_parameter
// from storages referenced by persistent ids. Nothing is ever executed: the
// few callables it understands are interpreted, any other one is an error
// naming it and the offset, as is any opcode outside the subset.

// Python values the unpickler builds.
type (
	pyGlobal struct{ module, name string }
	pyTuple  []any
	pyList   struct{ items []any }
	pyDict   struct {
		keys []any
		vals []any
	}
	pyMark  struct{}
	pyBytes []byte
	// pyStorage is a persistent storage record ('storage', type, key, location, numel).
	pyStorage struct {
		dtype    ir.DType
		key      string
		location string
		numel    int64
	}
	// pyTensor is a tensor rebuilt from a storage.
	pyTensor struct {
		storage      *pyStorage
		offset       int64
		size, stride []int64
		requiresGrad bool
		param        bool
	}
)

func (g *pyGlobal) String() string { return g.module + "." + g.name }

// Limits of the unpickler.
const (
	maxPickleStack = 1 << 20
	maxPickleMemo  = 1 << 22
)

// storageDTypes maps torch's typed-storage class names to element types.
var storageDTypes = map[string]ir.DType{
	"FloatStorage": ir.Float32, "DoubleStorage": ir.Float64, "HalfStorage": ir.Float16,
	"BFloat16Storage": ir.BFloat16, "LongStorage": ir.Int64, "IntStorage": ir.Int32,
	"ShortStorage": ir.Int16, "CharStorage": ir.Int8, "ByteStorage": ir.Uint8,
	"BoolStorage": ir.Bool, "ComplexFloatStorage": ir.Complex64,
	"ComplexDoubleStorage": ir.Complex128, "ComplexHalfStorage": ir.Complex32,
	"UInt16Storage": ir.Uint16, "UInt32Storage": ir.Uint32, "UInt64Storage": ir.Uint64,
	"Float8_e4m3fnStorage": ir.Float8E4M3FN, "Float8_e5m2Storage": ir.Float8E5M2,
	"Float8_e4m3fnuzStorage": ir.Float8E4M3FNUZ, "Float8_e5m2fnuzStorage": ir.Float8E5M2FNUZ,
	"Float8_e8m0fnuStorage": ir.Float8E8M0FNU, "UntypedStorage": ir.Uint8,
}

type unpickler struct {
	data     []byte
	pos      int
	op       int // offset of the opcode being run
	stack    []any
	marks    []int
	memo     map[int64]any
	storages map[string]*pyStorage
}

// unpickle runs a pickle and returns its result.
func unpickle(data []byte) (any, error) {
	u := &unpickler{data: data, memo: map[int64]any{}, storages: map[string]*pyStorage{}}
	return u.run()
}

func (u *unpickler) errorf(format string, args ...any) error {
	return fmt.Errorf("pickle offset %d: %s", u.op, fmt.Sprintf(format, args...))
}

func (u *unpickler) take(n int) ([]byte, error) {
	if n < 0 || n > len(u.data)-u.pos {
		return nil, u.errorf("truncated pickle (wanted %d more bytes)", n)
	}
	b := u.data[u.pos : u.pos+n]
	u.pos += n
	return b, nil
}

func (u *unpickler) line() (string, error) {
	i := strings.IndexByte(string(u.data[u.pos:min(len(u.data), u.pos+4096)]), '\n')
	if i < 0 {
		return "", u.errorf("truncated pickle (unterminated text argument)")
	}
	s := string(u.data[u.pos : u.pos+i])
	u.pos += i + 1
	return s, nil
}

func (u *unpickler) uint(n int) (uint64, error) {
	b, err := u.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, nil
}

func (u *unpickler) push(v any) error {
	if len(u.stack) >= maxPickleStack {
		return u.errorf("pickle stack deeper than %d", maxPickleStack)
	}
	u.stack = append(u.stack, v)
	return nil
}

func (u *unpickler) pop() (any, error) {
	n := len(u.stack)
	if n == 0 || (len(u.marks) > 0 && u.marks[len(u.marks)-1] == n) {
		return nil, u.errorf("pickle stack underflow")
	}
	v := u.stack[n-1]
	u.stack = u.stack[:n-1]
	return v, nil
}

func (u *unpickler) top() (any, error) {
	n := len(u.stack)
	if n == 0 || (len(u.marks) > 0 && u.marks[len(u.marks)-1] == n) {
		return nil, u.errorf("pickle stack underflow")
	}
	return u.stack[n-1], nil
}

// popMark pops everything down to the last MARK.
func (u *unpickler) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, u.errorf("no MARK on the pickle stack")
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := append([]any(nil), u.stack[m:]...)
	u.stack = u.stack[:m]
	return items, nil
}

func (u *unpickler) popN(n int) ([]any, error) {
	base := 0
	if len(u.marks) > 0 {
		base = u.marks[len(u.marks)-1]
	}
	if len(u.stack)-base < n {
		return nil, u.errorf("pickle stack underflow")
	}
	items := append([]any(nil), u.stack[len(u.stack)-n:]...)
	u.stack = u.stack[:len(u.stack)-n]
	return items, nil
}

func (u *unpickler) memoPut(idx int64) error {
	v, err := u.top()
	if err != nil {
		return err
	}
	if len(u.memo) >= maxPickleMemo {
		return u.errorf("pickle memo larger than %d", maxPickleMemo)
	}
	u.memo[idx] = v
	return nil
}

func (u *unpickler) memoGet(idx int64) error {
	v, ok := u.memo[idx]
	if !ok {
		return u.errorf("pickle memo has no entry %d", idx)
	}
	return u.push(v)
}

func (u *unpickler) str(n uint64) error {
	if n > uint64(len(u.data)) {
		return u.errorf("truncated pickle (string of %d bytes)", n)
	}
	b, err := u.take(int(n))
	if err != nil {
		return err
	}
	return u.push(string(b))
}

func (u *unpickler) run() (any, error) {
	for {
		if u.pos >= len(u.data) {
			return nil, fmt.Errorf("pickle offset %d: truncated pickle (no STOP)", u.pos)
		}
		u.op = u.pos
		code := u.data[u.pos]
		u.pos++
		var err error
		switch code {
		case 0x80: // PROTO
			var v uint64
			if v, err = u.uint(1); err == nil && v > 5 {
				err = u.errorf("pickle protocol %d is not supported", v)
			}
		case 0x95: // FRAME
			_, err = u.uint(8)
		case '.': // STOP
			v, err := u.pop()
			if err != nil {
				return nil, err
			}
			return v, nil
		case '(': // MARK
			u.marks = append(u.marks, len(u.stack))
			if len(u.marks) > maxPickleStack {
				err = u.errorf("too many MARKs")
			}
		case '0': // POP
			_, err = u.pop()
		case '1': // POP_MARK
			_, err = u.popMark()
		case '2': // DUP
			var v any
			if v, err = u.top(); err == nil {
				err = u.push(v)
			}
		case 'N':
			err = u.push(nil)
		case 0x88:
			err = u.push(true)
		case 0x89:
			err = u.push(false)
		case 'J': // BININT
			var v uint64
			if v, err = u.uint(4); err == nil {
				err = u.push(int64(int32(uint32(v))))
			}
		case 'K': // BININT1
			var v uint64
			if v, err = u.uint(1); err == nil {
				err = u.push(int64(v))
			}
		case 'M': // BININT2
			var v uint64
			if v, err = u.uint(2); err == nil {
				err = u.push(int64(v))
			}
		case 0x8a, 0x8b: // LONG1, LONG4
			var n uint64
			if n, err = u.uint(map[byte]int{0x8a: 1, 0x8b: 4}[code]); err == nil {
				err = u.long(n)
			}
		case 'I', 'L': // INT, LONG (text)
			var s string
			if s, err = u.line(); err == nil {
				s = strings.TrimSuffix(s, "L")
				switch s {
				case "00":
					err = u.push(false)
				case "01":
					err = u.push(true)
				default:
					v, perr := strconv.ParseInt(s, 10, 64)
					if perr != nil {
						err = u.errorf("bad integer %q", s)
					} else {
						err = u.push(v)
					}
				}
			}
		case 'G': // BINFLOAT (big endian)
			var b []byte
			if b, err = u.take(8); err == nil {
				err = u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
			}
		case 'F': // FLOAT (text)
			var s string
			if s, err = u.line(); err == nil {
				f, perr := strconv.ParseFloat(s, 64)
				if perr != nil {
					err = u.errorf("bad float %q", s)
				} else {
					err = u.push(f)
				}
			}
		case 'X', 'T', 'B': // BINUNICODE, BINSTRING, BINBYTES
			var n uint64
			if n, err = u.uint(4); err == nil {
				err = u.str(n)
			}
		case 0x8c, 'U', 'C': // SHORT_BINUNICODE, SHORT_BINSTRING, SHORT_BINBYTES
			var n uint64
			if n, err = u.uint(1); err == nil {
				err = u.str(n)
			}
		case 0x8d, 0x8e: // BINUNICODE8, BINBYTES8
			var n uint64
			if n, err = u.uint(8); err == nil {
				err = u.str(n)
			}
		case ')':
			err = u.push(pyTuple{})
		case 't':
			var items []any
			if items, err = u.popMark(); err == nil {
				err = u.push(pyTuple(items))
			}
		case 0x85, 0x86, 0x87: // TUPLE1..3
			var items []any
			if items, err = u.popN(int(code - 0x84)); err == nil {
				err = u.push(pyTuple(items))
			}
		case ']':
			err = u.push(&pyList{})
		case 'l':
			var items []any
			if items, err = u.popMark(); err == nil {
				err = u.push(&pyList{items: items})
			}
		case 'a', 'e': // APPEND, APPENDS
			var items []any
			if code == 'a' {
				var v any
				v, err = u.pop()
				items = []any{v}
			} else {
				items, err = u.popMark()
			}
			if err == nil {
				var t any
				if t, err = u.top(); err == nil {
					l, ok := t.(*pyList)
					if !ok {
						err = u.errorf("APPEND to a %T", t)
					} else {
						l.items = append(l.items, items...)
					}
				}
			}
		case '}':
			err = u.push(&pyDict{})
		case 'd':
			var items []any
			if items, err = u.popMark(); err == nil {
				d := &pyDict{}
				err = u.setItems(d, items)
				if err == nil {
					err = u.push(d)
				}
			}
		case 's', 'u': // SETITEM, SETITEMS
			var items []any
			if code == 's' {
				items, err = u.popN(2)
			} else {
				items, err = u.popMark()
			}
			if err == nil {
				var t any
				if t, err = u.top(); err == nil {
					d, ok := t.(*pyDict)
					if !ok {
						err = u.errorf("SETITEM on a %T", t)
					} else {
						err = u.setItems(d, items)
					}
				}
			}
		case 'c': // GLOBAL
			var mod, name string
			if mod, err = u.line(); err == nil {
				if name, err = u.line(); err == nil {
					err = u.push(&pyGlobal{mod, name})
				}
			}
		case 0x93: // STACK_GLOBAL
			var items []any
			if items, err = u.popN(2); err == nil {
				mod, ok1 := items[0].(string)
				name, ok2 := items[1].(string)
				if !ok1 || !ok2 {
					err = u.errorf("STACK_GLOBAL needs two strings")
				} else {
					err = u.push(&pyGlobal{mod, name})
				}
			}
		case 'R', 0x81: // REDUCE, NEWOBJ
			var items []any
			if items, err = u.popN(2); err == nil {
				var v any
				if v, err = u.call(items[0], items[1]); err == nil {
					err = u.push(v)
				}
			}
		case 'b': // BUILD: state is ignored; only dicts and tensors may receive it
			var state any
			if state, err = u.pop(); err == nil {
				var t any
				if t, err = u.top(); err == nil {
					switch t.(type) {
					case *pyDict, *pyTensor:
					default:
						err = u.errorf("BUILD on a %T is not supported", t)
					}
				}
			}
			_ = state
		case 'Q': // BINPERSID
			var pid any
			if pid, err = u.pop(); err == nil {
				var v any
				if v, err = u.persistent(pid); err == nil {
					err = u.push(v)
				}
			}
		case 'q': // BINPUT
			var i uint64
			if i, err = u.uint(1); err == nil {
				err = u.memoPut(int64(i))
			}
		case 'r': // LONG_BINPUT
			var i uint64
			if i, err = u.uint(4); err == nil {
				err = u.memoPut(int64(i))
			}
		case 'p': // PUT
			var s string
			if s, err = u.line(); err == nil {
				i, perr := strconv.ParseInt(s, 10, 64)
				if perr != nil {
					err = u.errorf("bad memo index %q", s)
				} else {
					err = u.memoPut(i)
				}
			}
		case 0x94: // MEMOIZE
			err = u.memoPut(int64(len(u.memo)))
		case 'h': // BINGET
			var i uint64
			if i, err = u.uint(1); err == nil {
				err = u.memoGet(int64(i))
			}
		case 'j': // LONG_BINGET
			var i uint64
			if i, err = u.uint(4); err == nil {
				err = u.memoGet(int64(i))
			}
		case 'g': // GET
			var s string
			if s, err = u.line(); err == nil {
				i, perr := strconv.ParseInt(s, 10, 64)
				if perr != nil {
					err = u.errorf("bad memo index %q", s)
				} else {
					err = u.memoGet(i)
				}
			}
		default:
			err = u.errorf("pickle opcode %q (0x%02x) is not supported (only the tensor subset of torch.save is read)", rune(code), code)
		}
		if err != nil {
			return nil, err
		}
	}
}

// long pushes a little-endian two's-complement integer of n bytes.
func (u *unpickler) long(n uint64) error {
	if n > 8 {
		return u.errorf("integer of %d bytes does not fit in 64 bits", n)
	}
	b, err := u.take(int(n))
	if err != nil {
		return err
	}
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if n > 0 && n < 8 && b[n-1]&0x80 != 0 {
		v |= ^uint64(0) << (8 * n) // sign-extend
	}
	return u.push(int64(v))
}

func (u *unpickler) setItems(d *pyDict, items []any) error {
	if len(items)%2 != 0 {
		return u.errorf("odd number of items for a dict")
	}
	for i := 0; i < len(items); i += 2 {
		d.keys = append(d.keys, items[i])
		d.vals = append(d.vals, items[i+1])
	}
	return nil
}
