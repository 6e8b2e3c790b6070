package fbs

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Kind classifies a field's wire representation.
type Kind int

// Field kinds.
const (
	Scalar    Kind = iota // inline scalar or enum of Size bytes
	String                // offset to a string
	Table                 // offset to a table
	UnionType             // the u8 tag slot of a union field
	Union                 // offset to the union member table
	VecScalar             // offset to a vector of Size-byte scalars
	VecString             // offset to a vector of string offsets
	VecTable              // offset to a vector of table offsets
)

// Field is one vtable slot of a table.
type Field struct {
	Name       string
	Slot       int
	Kind       Kind
	Size       int    // scalar or vector element size in bytes
	Type       string // table or union name for Table, VecTable, Union, UnionType
	Deprecated bool
}

// TableDef is a table with its fields in slot order.
type TableDef struct {
	Name   string
	Fields []Field
}

// UnionDef maps union tags to member table names.
type UnionDef struct {
	Name    string
	Members map[uint8]string // tag -> table
	Names   map[uint8]string // tag -> member name (alias)
}

// Schema is a parsed set of schema files.
type Schema struct {
	Tables         map[string]*TableDef
	Unions         map[string]*UnionDef
	Enums          map[string]int // enum name -> byte size
	EnumValues     map[string]map[int64]string
	RootType       string
	FileIdentifier string
}

var scalarSizes = map[string]int{
	"bool": 1, "byte": 1, "ubyte": 1, "int8": 1, "uint8": 1,
	"short": 2, "ushort": 2, "int16": 2, "uint16": 2,
	"int": 4, "uint": 4, "int32": 4, "uint32": 4, "float": 4, "float32": 4,
	"long": 8, "ulong": 8, "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}

// Parse reads file and the files it includes from fsys. The root type and
// file identifier are those of file itself.
func Parse(fsys fs.FS, file string) (*Schema, error) {
	s := &Schema{Tables: map[string]*TableDef{}, Unions: map[string]*UnionDef{}, Enums: map[string]int{}, EnumValues: map[string]map[int64]string{}}
	p := &parser{s: s, fsys: fsys, seen: map[string]bool{}}
	if err := p.file(file, true); err != nil {
		return nil, err
	}
	// Resolve field types now that every declaration is known.
	for _, t := range s.Tables {
		var out []Field
		for _, f := range t.Fields {
			rf, err := s.resolve(f)
			if err != nil {
				return nil, fmt.Errorf("%s: table %s field %s: %w", file, t.Name, f.Name, err)
			}
			out = append(out, rf...)
		}
		for i := range out {
			out[i].Slot = i
		}
		t.Fields = out
	}
	for _, u := range s.Unions {
		for tag, m := range u.Members {
			if s.Tables[m] == nil {
				return nil, fmt.Errorf("%s: union %s member %d: unknown table %s", file, u.Name, tag, m)
			}
		}
	}
	if s.RootType != "" && s.Tables[s.RootType] == nil {
		return nil, fmt.Errorf("%s: root_type %s is not a table", file, s.RootType)
	}
	return s, nil
}

// resolve turns a raw field (Type holds the schema type text) into one slot,
// or two for a union.
func (s *Schema) resolve(f Field) ([]Field, error) {
	typ := f.Type
	vec := strings.HasPrefix(typ, "[")
	if vec {
		if !strings.HasSuffix(typ, "]") {
			return nil, fmt.Errorf("bad vector type %q", typ)
		}
		typ = typ[1 : len(typ)-1]
	}
	typ = typ[strings.LastIndex(typ, ".")+1:]
	out := f
	out.Type = ""
	switch {
	case scalarSizes[typ] > 0 || s.Enums[typ] > 0:
		size := scalarSizes[typ]
		if size == 0 {
			size = s.Enums[typ]
		}
		out.Size = size
		out.Kind = Scalar
		if vec {
			out.Kind = VecScalar
		}
	case typ == "string":
		out.Kind = String
		if vec {
			out.Kind = VecString
		}
	case s.Tables[typ] != nil:
		out.Type = typ
		out.Kind = Table
		if vec {
			out.Kind = VecTable
		}
	case s.Unions[typ] != nil:
		if vec {
			return nil, fmt.Errorf("vectors of unions are not supported")
		}
		tag := Field{Name: f.Name + "_type", Kind: UnionType, Size: 1, Type: typ, Deprecated: f.Deprecated}
		out.Kind = Union
		out.Type = typ
		return []Field{tag, out}, nil
	default:
		return nil, fmt.Errorf("unknown type %q", f.Type)
	}
	return []Field{out}, nil
}

type parser struct {
	s    *Schema
	fsys fs.FS
	seen map[string]bool
	toks []string
	pos  int
	name string
}

func (p *parser) file(name string, top bool) error {
	if p.seen[name] {
		return nil
	}
	p.seen[name] = true
	data, err := fs.ReadFile(p.fsys, name)
	if err != nil {
		return err
	}
	toks, err := tokenize(string(data))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	saveToks, savePos, saveName := p.toks, p.pos, p.name
	p.toks, p.pos, p.name = toks, 0, name
	defer func() { p.toks, p.pos, p.name = saveToks, savePos, saveName }()
	for p.pos < len(p.toks) {
		kw := p.next()
		var err error
		switch kw {
		case "include":
			inc, e := p.str()
			if e != nil {
				return e
			}
			if e := p.expect(";"); e != nil {
				return e
			}
			// Includes resolve relative to the including file.
			err = p.file(path.Join(path.Dir(name), inc), false)
		case "namespace", "file_extension":
			p.next()
			err = p.expect(";")
		case "root_type":
			r := p.next()
			if top {
				p.s.RootType = r
			}
			err = p.expect(";")
		case "file_identifier":
			id, e := p.str()
			if e != nil {
				return e
			}
			if top {
				p.s.FileIdentifier = id
			}
			err = p.expect(";")
		case "enum":
			err = p.enum()
		case "union":
			err = p.union()
		case "table":
			err = p.table()
		default:
			err = fmt.Errorf("unexpected %q", kw)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (p *parser) next() string {
	if p.pos >= len(p.toks) {
		return ""
	}
	t := p.toks[p.pos]
	p.pos++
	return t
}

func (p *parser) peek() string {
	if p.pos >= len(p.toks) {
		return ""
	}
	return p.toks[p.pos]
}

func (p *parser) expect(t string) error {
	if got := p.next(); got != t {
		return fmt.Errorf("expected %q, got %q", t, got)
	}
	return nil
}

func (p *parser) str() (string, error) {
	t := p.next()
	if len(t) < 2 || t[0] != '"' {
		return "", fmt.Errorf("expected a string, got %q", t)
	}
	return t[1 : len(t)-1], nil
}

// attrs skips a parenthesized attribute list, reporting whether it holds
// "deprecated".
func (p *parser) attrs() (deprecated bool, err error) {
	if p.peek() != "(" {
		return false, nil
	}
	p.next()
	for {
		t := p.next()
		switch t {
		case "":
			return false, fmt.Errorf("unterminated attribute list")
		case ")":
			return deprecated, nil
		case "deprecated":
			deprecated = true
		}
	}
}

func (p *parser) enum() error {
	name := p.next()
	if err := p.expect(":"); err != nil {
		return err
	}
	size := scalarSizes[p.next()]
	if size == 0 {
		return fmt.Errorf("enum %s: bad underlying type", name)
	}
	if _, err := p.attrs(); err != nil {
		return err
	}
	if err := p.expect("{"); err != nil {
		return err
	}
	vals := map[int64]string{}
	next := int64(0)
	for p.peek() != "}" {
		member := p.next()
		if member == "" {
			return fmt.Errorf("enum %s: unterminated", name)
		}
		if p.peek() == "=" {
			p.next()
			v, err := strconv.ParseInt(p.next(), 0, 64)
			if err != nil {
				return fmt.Errorf("enum %s: %w", name, err)
			}
			next = v
		}
		vals[next] = member
		next++
		if p.peek() == "," {
			p.next()
		}
	}
	p.next()
	p.s.Enums[name] = size
	p.s.EnumValues[name] = vals
	return nil
}

func (p *parser) union() error {
	name := p.next()
	if err := p.expect("{"); err != nil {
		return err
	}
	u := &UnionDef{Name: name, Members: map[uint8]string{}, Names: map[uint8]string{}}
	tag := 1
	for p.peek() != "}" {
		member := p.next()
		if member == "" {
			return fmt.Errorf("union %s: unterminated", name)
		}
		table := member
		if p.peek() == ":" {
			p.next()
			table = p.next()
		}
		if p.peek() == "=" {
			p.next()
			v, err := strconv.Atoi(p.next())
			if err != nil {
				return fmt.Errorf("union %s: %w", name, err)
			}
			tag = v
		}
		if tag < 1 || tag > 255 {
			return fmt.Errorf("union %s: tag %d out of range", name, tag)
		}
		u.Members[uint8(tag)] = table[strings.LastIndex(table, ".")+1:]
		u.Names[uint8(tag)] = member
		tag++
		if p.peek() == "," {
			p.next()
		}
	}
	p.next()
	p.s.Unions[name] = u
	return nil
}

func (p *parser) table() error {
	name := p.next()
	if _, err := p.attrs(); err != nil {
		return err
	}
	if err := p.expect("{"); err != nil {
		return err
	}
	t := &TableDef{Name: name}
	for p.peek() != "}" {
		fname := p.next()
		if fname == "" {
			return fmt.Errorf("table %s: unterminated", name)
		}
		if err := p.expect(":"); err != nil {
			return fmt.Errorf("table %s: %w", name, err)
		}
		typ := p.next()
		if typ == "[" {
			typ = "[" + p.next() + "]"
			if err := p.expect("]"); err != nil {
				return fmt.Errorf("table %s field %s: %w", name, fname, err)
			}
		}
		if p.peek() == "=" {
			p.next()
			p.next()
		}
		dep, err := p.attrs()
		if err != nil {
			return fmt.Errorf("table %s field %s: %w", name, fname, err)
		}
		if err := p.expect(";"); err != nil {
			return fmt.Errorf("table %s field %s: %w", name, fname, err)
		}
		t.Fields = append(t.Fields, Field{Name: fname, Type: typ, Deprecated: dep})
	}
	p.next()
	p.s.Tables[name] = t
	return nil
}

func tokenize(src string) ([]string, error) {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment")
			}
			i += end + 4
		case c == '"':
			end := strings.IndexByte(src[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated string")
			}
			toks = append(toks, src[i:i+end+2])
			i += end + 2
		case strings.IndexByte("{}[]():;,=", c) >= 0:
			toks = append(toks, string(c))
			i++
		default:
			j := i
			for j < len(src) && strings.IndexByte(" \t\r\n{}[]():;,=\"/", src[j]) < 0 {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected character %q", c)
			}
			toks = append(toks, src[i:j])
			i = j
		}
	}
	return toks, nil
}
