package pt2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Program metadata keys the reader sets (and the writer reads back).
const (
	MetaSchemaVersion = "pt2.schema_version"
	MetaLayout        = "pt2.layout"
	MetaTorchVersion  = "pt2.torch_version"
	MetaOpsetVersion  = "pt2.opset_version"
	MetaVerifiers     = "pt2.verifiers"
	MetaGuardsCode    = "pt2.guards_code"
	MetaNamedTuples   = "pt2.treespec_namedtuple_fields"
	MetaModel         = "pt2.model"
	// MetaEscape prefixes graph-module metadata keys that would otherwise
	// collide with the keys above ("pt2.x" is stored as "pt2.metadata.pt2.x");
	// all other graph-module metadata keys are program metadata keys as is.
	MetaEscape = "pt2.metadata."
)

// Layout names recorded under MetaLayout.
const (
	LayoutArchive       = "pt2-archive"        // torch ≥ 2.9: raw payloads
	LayoutArchivePickle = "pt2-archive-pickle" // torch 2.8: pickled weights
	LayoutLegacyZip     = "legacy-zip"         // torch 2.2–2.7
	LayoutJSON          = "json"               // a bare program JSON document
)

// maxRegionDepth bounds the nesting of higher-order-op subgraphs.
const maxRegionDepth = 64

// decodeProgram turns an ExportedProgram JSON document into an IR program
// (without weights). Errors carry the JSON path.
func decodeProgram(data []byte, layout string) (*ir.Program, error) {
	d := pt2schema.NewDecoder(data)
	top, err := d.Fields()
	if err != nil {
		return nil, err
	}
	if err := d.End(); err != nil {
		return nil, err
	}
	r := &reader{p: ir.NewProgram(), syms: newSymbols(), ops: map[string]ir.Op{}}
	p := r.p
	sv, ok := top["schema_version"]
	if !ok {
		return nil, d.Errorf("no schema_version (not a torch.export program?)")
	}
	v, err := pt2schema.DecodeSchemaVersion(sv)
	if err != nil {
		return nil, err
	}
	// Major 7 (torch 2.5) differs from 8 in nothing this reader relies on:
	// it decodes by field and tag presence (testdata/releases/torch-2.5.1).
	if v.Major != pt2schema.SchemaMajor && v.Major != 7 {
		return nil, sv.Errorf("schema version %d.%d is not supported (this reader handles major versions 7 and %d: torch 2.5 and later)", v.Major, v.Minor, pt2schema.SchemaMajor)
	}
	p.Meta.Set(MetaSchemaVersion, fmt.Sprintf("%d.%d", v.Major, v.Minor))
	p.Meta.Set(MetaLayout, layout)
	if err := r.header(top); err != nil {
		return nil, err
	}
	gmd, ok := top["graph_module"]
	if !ok {
		return nil, d.Errorf("no graph_module")
	}
	gm, err := gmd.Fields()
	if err != nil {
		return nil, err
	}
	if md := gm["metadata"]; md != nil && !md.IsNull() {
		kvs, err := md.StrMap()
		if err != nil {
			return nil, err
		}
		for _, kv := range kvs {
			k := kv.Key
			if strings.HasPrefix(k, "pt2.") {
				k = MetaEscape + k
			}
			p.Meta.Set(k, kv.Value)
		}
		// torch.export.save keeps only graph_module.meta["custom"], as JSON
		// text under "custom": that is where a capture shim (fxport capture)
		// leaves export.capture_steps and friends. Its entries become program
		// metadata keys too; a key given on its own wins.
		for _, kv := range kvs {
			if kv.Key == "custom" {
				unpackCustomMeta(p, kv.Value)
			}
		}
	}
	if nt := gm["treespec_namedtuple_fields"]; nt != nil && !nt.IsNull() {
		if err := r.namedTuples(nt); err != nil {
			return nil, err
		}
	}
	sd, ok := gm["signature"]
	if !ok {
		return nil, gmd.Errorf("no signature")
	}
	sig, err := pt2schema.DecodeSignature(sd)
	if err != nil {
		return nil, err
	}
	gd, ok := gm["graph"]
	if !ok {
		return nil, gmd.Errorf("no graph")
	}
	if err := r.graph(p.Main, gd, &sig, sd.Path()); err != nil {
		return nil, err
	}
	if mc := gm["module_call_graph"]; mc != nil && !mc.IsNull() {
		if err := r.moduleCallGraph(mc); err != nil {
			return nil, err
		}
	}
	if rc := top["range_constraints"]; rc != nil && !rc.IsNull() {
		if err := r.rangeConstraints(rc); err != nil {
			return nil, err
		}
	}
	r.declareSymbols()
	r.syms.resolveDimOrders(r.p.Env)
	return p, nil
}

// reader holds the state of one program's conversion.
type reader struct {
	p      *ir.Program
	syms   *symbols
	ops    map[string]ir.Op
	ranges map[string]sym.Range
	depth  int
}

// header reads the scalar top-level fields into program metadata.
func (r *reader) header(top map[string]*pt2schema.Decoder) error {
	p := r.p
	tv := "<=2.4" // torch's default when the field is absent
	if d := top["torch_version"]; d != nil && !d.IsNull() {
		var err error
		if tv, err = d.Str(); err != nil {
			return err
		}
	}
	if tv != "" {
		p.Meta.Set(MetaTorchVersion, tv)
	}
	if d := top["opset_version"]; d != nil && !d.IsNull() {
		type kv struct {
			k string
			v int64
		}
		var kvs []kv
		err := d.Map(func(k string) error {
			v, err := d.Int()
			kvs = append(kvs, kv{k, v})
			return err
		})
		if err != nil {
			return err
		}
		if len(kvs) > 0 {
			sort.Slice(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
			var b bytes.Buffer
			e := pt2schema.NewEncoder(&b)
			e.BeginObject()
			for _, x := range kvs {
				e.Key(x.k)
				e.Int(x.v)
			}
			e.EndObject()
			if err := e.Flush(); err != nil {
				return err
			}
			p.Meta.Set(MetaOpsetVersion, b.String())
		}
	}
	for _, f := range []struct{ field, key string }{{"verifiers", MetaVerifiers}, {"guards_code", MetaGuardsCode}} {
		d := top[f.field]
		if d == nil || d.IsNull() {
			continue
		}
		ss, err := d.Strs()
		if err != nil {
			return err
		}
		if len(ss) > 0 {
			p.Meta.Set(f.key, encodeStrs(ss))
		}
	}
	return nil
}

// encodeStrs is the JSON text of a list of strings.
func encodeStrs(ss []string) string {
	var b bytes.Buffer
	e := pt2schema.NewEncoder(&b)
	e.BeginArray()
	for _, s := range ss {
		e.Str(s)
	}
	e.EndArray()
	_ = e.Flush()
	return b.String()
}

// namedTuples keeps treespec_namedtuple_fields as canonical JSON text.
func (r *reader) namedTuples(d *pt2schema.Decoder) error {
	type entry struct {
		name   string
		fields []string
	}
	var es []entry
	err := d.Map(func(k string) error {
		var fields []string
		err := d.Object(func(key string) error {
			if key != "field_names" {
				return nil
			}
			var err error
			fields, err = d.Strs()
			return err
		})
		es = append(es, entry{k, fields})
		return err
	})
	if err != nil || len(es) == 0 {
		return err
	}
	sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
	var b bytes.Buffer
	e := pt2schema.NewEncoder(&b)
	e.BeginObject()
	for _, x := range es {
		e.Key(x.name)
		e.BeginObject()
		e.Key("field_names")
		e.BeginArray()
		for _, f := range x.fields {
			e.Str(f)
		}
		e.EndArray()
		e.EndObject()
	}
	e.EndObject()
	if err := e.Flush(); err != nil {
		return err
	}
	r.p.Meta.Set(MetaNamedTuples, b.String())
	return nil
}

// rangeConstraints records each symbol's range.
func (r *reader) rangeConstraints(d *pt2schema.Decoder) error {
	r.ranges = map[string]sym.Range{}
	return d.Map(func(name string) error {
		if !sym.ValidName(name) {
			return d.Errorf("%q is not a symbol name", name)
		}
		rc, err := pt2schema.DecodeRangeConstraint(d)
		if err != nil {
			return err
		}
		rg := sym.Unbounded()
		if rc.HasMin {
			rg.Lo = sym.Finite(rc.Min)
		}
		if rc.HasMax {
			rg.Hi = sym.Finite(rc.Max)
		}
		r.ranges[name] = rg
		return nil
	})
}

// declareSymbols declares every symbol the program mentions or constrains,
// with its range, its hint and whether it is unbacked (u*).
func (r *reader) declareSymbols() {
	names := map[string]bool{}
	for n := range r.syms.seen {
		names[n] = true
	}
	for n := range r.ranges {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		rg, ok := r.ranges[n]
		if !ok {
			rg = sym.Unbounded()
		}
		var hint *int64
		if h, ok := r.syms.hints[n]; ok {
			hint = &h
		}
		r.p.Env.Declare(n, rg, hint, strings.HasPrefix(n, "u"))
	}
}

// moduleCallGraph reads the module call graph; the root entry's pytree
// specs become the signature's.
func (r *reader) moduleCallGraph(d *pt2schema.Decoder) error {
	return d.Array(func(i int) error {
		m, err := pt2schema.DecodeModuleCallEntry(d)
		if err != nil {
			return err
		}
		mc := ir.ModuleCall{FQN: m.FQN}
		if s := m.Signature; s != nil {
			if mc.Inputs, err = callArgs(s.Inputs); err != nil {
				return d.Errorf("signature.inputs: %v", err)
			}
			if mc.Outputs, err = callArgs(s.Outputs); err != nil {
				return d.Errorf("signature.outputs: %v", err)
			}
			mc.InSpec, mc.OutSpec = s.InSpec, s.OutSpec
			if m.FQN == "" {
				r.p.Signature.InSpec, r.p.Signature.OutSpec = s.InSpec, s.OutSpec
			}
		}
		r.p.ModuleCallGraph = append(r.p.ModuleCallGraph, mc)
		return nil
	})
}

// callArgs spells module-call arguments as strings: a value's name, or
// "=" and a literal in IR text form ("=None", "=3", "=\"s\"").
func callArgs(args []pt2schema.Argument) ([]string, error) {
	out := make([]string, len(args))
	for i := range args {
		a := &args[i]
		if a.Tag.IsRef() {
			out[i] = a.Name
			continue
		}
		lit, ok := literalArg(a)
		if !ok {
			return nil, fmt.Errorf("[%d]: %s is not supported in a module call signature", i, a.Tag)
		}
		out[i] = "=" + lit.String()
	}
	return out, nil
}

// ParseCallArg reads back a module-call argument spelled by the reader: a
// value name, or "=" and a literal (None, True, False, an int, a float, a
// quoted string).
func ParseCallArg(s string) (name string, lit ir.Arg, isLit bool, err error) {
	if !strings.HasPrefix(s, "=") {
		return s, ir.Arg{}, false, nil
	}
	t := s[1:]
	switch t {
	case "None":
		return "", ir.NoneArg(), true, nil
	case "True":
		return "", ir.BoolArg(true), true, nil
	case "False":
		return "", ir.BoolArg(false), true, nil
	case "inf":
		return "", ir.FloatArg(posInf()), true, nil
	case "-inf":
		return "", ir.FloatArg(-posInf()), true, nil
	case "nan":
		return "", ir.FloatArg(nan()), true, nil
	}
	if strings.HasPrefix(t, `"`) {
		u, err := strconv.Unquote(t)
		if err != nil {
			return "", ir.Arg{}, false, fmt.Errorf("bad string literal %s", t)
		}
		return "", ir.StringArg(u), true, nil
	}
	if v, err := strconv.ParseInt(t, 10, 64); err == nil {
		return "", ir.IntArg(v), true, nil
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return "", ir.FloatArg(f), true, nil
	}
	return "", ir.Arg{}, false, fmt.Errorf("bad literal %q", t)
}

// unpackCustomMeta sets one program metadata key per entry of the JSON
// object text custom: string values as they are, other values as their JSON
// text. Keys already set, and keys in the reader's own pt2. namespace, are
// left alone; text that is not a JSON object is kept only under "custom".
func unpackCustomMeta(p *ir.Program, custom string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(custom), &obj); err != nil {
		return
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" || k == "custom" || strings.HasPrefix(k, "pt2.") {
			continue
		}
		if _, ok := p.Meta.Get(k); ok {
			continue
		}
		raw := obj[k]
		var str string
		if err := json.Unmarshal(raw, &str); err == nil {
			p.Meta.Set(k, str)
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			continue
		}
		p.Meta.Set(k, compact.String())
	}
}
