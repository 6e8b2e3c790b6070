package fbs

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Limits on the work a verification may do (shared sub-tables could
// otherwise make it exponential), as in flatbuffers::Verifier.
const (
	maxDepth  = 64
	maxTables = 1 << 20
)

// Error is a verification failure at a field path such as
// "execution_plan[0].values[3].val(Tensor).sizes".
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Identifier returns the 4-byte file identifier of buf ("" when buf is too short).
func Identifier(buf []byte) string {
	if len(buf) < 8 {
		return ""
	}
	return string(buf[4:8])
}

// Verify checks buf as a flatbuffer whose root is s.RootType: the root
// offset, the file identifier (when wantID is not empty) and every table,
// vector, string and union member reachable from the root, against the
// schema's declared fields. Deprecated fields and fields beyond the schema's
// last slot (written by a newer schema) are not followed; union members with
// tags the schema does not know are not followed either.
func (s *Schema) Verify(buf []byte, wantID string) error {
	if len(buf) < 8 {
		return &Error{Msg: fmt.Sprintf("%d bytes is too short for a flatbuffer", len(buf))}
	}
	if wantID != "" && Identifier(buf) != wantID {
		return &Error{Msg: fmt.Sprintf("file identifier is %q, want %q", Identifier(buf), wantID)}
	}
	root := uint64(binary.LittleEndian.Uint32(buf))
	v := &verifier{s: s, buf: buf, path: []string{s.RootType}}
	return v.table(root, s.Tables[s.RootType], 0)
}

type verifier struct {
	s      *Schema
	buf    []byte
	tables int
	path   []string
}

func (v *verifier) fail(format string, args ...any) error {
	return &Error{Path: strings.Join(v.path, ""), Msg: fmt.Sprintf(format, args...)}
}

func (v *verifier) push(s string) { v.path = append(v.path, s) }
func (v *verifier) pop()          { v.path = v.path[:len(v.path)-1] }

func (v *verifier) u32(at uint64) (uint64, bool) {
	if at+4 > uint64(len(v.buf)) {
		return 0, false
	}
	return uint64(binary.LittleEndian.Uint32(v.buf[at:])), true
}

// table verifies the table at pos and its reachable children.
func (v *verifier) table(pos uint64, def *TableDef, depth int) error {
	if def == nil {
		return v.fail("no schema table")
	}
	if depth > maxDepth {
		return v.fail("nesting deeper than %d", maxDepth)
	}
	if v.tables++; v.tables > maxTables {
		return v.fail("more than %d tables", maxTables)
	}
	if pos+4 > uint64(len(v.buf)) {
		return v.fail("%s table at offset %d is outside the %d-byte buffer", def.Name, pos, len(v.buf))
	}
	soff := int64(int32(binary.LittleEndian.Uint32(v.buf[pos:])))
	vt := int64(pos) - soff
	if vt < 0 || vt+4 > int64(len(v.buf)) {
		return v.fail("%s table at offset %d: vtable offset %d is outside the buffer", def.Name, pos, vt)
	}
	vtSize := int64(binary.LittleEndian.Uint16(v.buf[vt:]))
	if vtSize < 4 || vtSize%2 != 0 || vt+vtSize > int64(len(v.buf)) {
		return v.fail("%s table at offset %d: bad vtable size %d", def.Name, pos, vtSize)
	}
	nslots := int((vtSize - 4) / 2)
	fieldOff := func(slot int) uint64 {
		if slot >= nslots {
			return 0
		}
		return uint64(binary.LittleEndian.Uint16(v.buf[vt+4+2*int64(slot):]))
	}
	for _, f := range def.Fields {
		off := fieldOff(f.Slot)
		if off == 0 || f.Deprecated {
			continue
		}
		size := uint64(4)
		if f.Kind == Scalar || f.Kind == UnionType {
			size = uint64(f.Size)
		}
		// Like flatbuffers::Verifier, fields are checked against the buffer,
		// not the vtable's table size: writers (exir's Python builder among
		// them) record sizes that exclude a trailing 8-byte scalar's padding.
		if pos+off+size > uint64(len(v.buf)) {
			v.push("." + f.Name)
			err := v.fail("field at table offset %d (size %d) runs past the %d-byte buffer", off, size, len(v.buf))
			v.pop()
			return err
		}
		if f.Kind == Scalar || f.Kind == UnionType {
			continue
		}
		v.push("." + f.Name)
		at := pos + off
		rel, _ := v.u32(at)
		target := at + rel
		var err error
		switch f.Kind {
		case String:
			err = v.string(target)
		case Table:
			err = v.table(target, v.s.Tables[f.Type], depth+1)
		case Union:
			tagOff := fieldOff(f.Slot - 1)
			if tagOff == 0 {
				err = v.fail("union value without a type tag")
				break
			}
			tag := v.buf[pos+tagOff]
			member, ok := v.s.Unions[f.Type].Members[tag]
			if !ok {
				break // a newer schema's member: not followed
			}
			v.path[len(v.path)-1] += "(" + v.s.Unions[f.Type].Names[tag] + ")"
			err = v.table(target, v.s.Tables[member], depth+1)
		case VecScalar, VecString, VecTable:
			err = v.vector(target, f, depth)
		}
		v.pop()
		if err != nil {
			return err
		}
	}
	return nil
}

// vectorLen checks a vector header and that n elements of size bytes fit.
func (v *verifier) vectorLen(at uint64, size uint64) (uint64, error) {
	n, ok := v.u32(at)
	if !ok {
		return 0, v.fail("vector at offset %d is outside the %d-byte buffer", at, len(v.buf))
	}
	if at+4+n*size > uint64(len(v.buf)) {
		return 0, v.fail("vector at offset %d: %d elements of %d bytes run past the %d-byte buffer", at, n, size, len(v.buf))
	}
	return n, nil
}

func (v *verifier) string(at uint64) error {
	if _, err := v.vectorLen(at, 1); err != nil {
		return err
	}
	return nil
}

func (v *verifier) vector(at uint64, f Field, depth int) error {
	elem := uint64(4)
	if f.Kind == VecScalar {
		elem = uint64(f.Size)
	}
	n, err := v.vectorLen(at, elem)
	if err != nil || f.Kind == VecScalar {
		return err
	}
	for i := uint64(0); i < n; i++ {
		ep := at + 4 + 4*i
		rel, _ := v.u32(ep)
		v.push("[" + strconv.FormatUint(i, 10) + "]")
		if f.Kind == VecString {
			err = v.string(ep + rel)
		} else {
			err = v.table(ep+rel, v.s.Tables[f.Type], depth+1)
		}
		v.pop()
		if err != nil {
			return err
		}
	}
	return nil
}
