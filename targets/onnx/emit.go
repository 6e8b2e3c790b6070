package onnx

import (
	"encoding/json"
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/provenance"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
	"github.com/fxport/fxport/targets/onnx/opt"
)

// Opset bounds: 18 is the default (torchlib's); 17 up to 26, the newest
// default-domain opset ONNX Runtime 1.31 runs, are selectable.
const (
	DefaultOpset      = 18
	MinSupportedOpset = 17
	MaxSupportedOpset = 26
)

// Opsets lists every selectable opset, oldest first.
func Opsets() []int {
	var out []int
	for v := MinSupportedOpset; v <= MaxSupportedOpset; v++ {
		out = append(out, v)
	}
	return out
}

// CheckOpset reports, in user words, why opset cannot be chosen.
func CheckOpset(opset int) error {
	if opset < MinSupportedOpset || opset > MaxSupportedOpset {
		return fmt.Errorf("ONNX opset %d is not offered: choose one from %d to %d (default %d; %d is the newest ONNX Runtime 1.31 runs)",
			opset, MinSupportedOpset, MaxSupportedOpset, DefaultOpset, MaxSupportedOpset)
	}
	return nil
}

// MetadataKey is the metadata_props key of the export metadata (ONNX-S03).
const MetadataKey = "fxport.export_metadata"

// The metadata_props keys of the provenance (Options.Provenance): the
// fxport version, the pipeline text and the workarounds that fired (a JSON
// list of {id, name, kind, count}).
const (
	MetaVersion     = "fxport.version"
	MetaPipeline    = "fxport.pipeline"
	MetaWorkarounds = "fxport.workarounds"
)

// Options control emission.
type Options struct {
	// Opset is the default-domain opset (0: DefaultOpset).
	Opset int
	// ExternalThreshold: initializers of at least this many bytes go to
	// external data when the model is written with Write (0: 1 MiB; <0: never).
	ExternalThreshold int64
	// ProducerVersion is stamped into the model (default: the
	// provenance's version, else provenance.Version()).
	ProducerVersion string
	// Provenance, when set, is recorded in metadata_props (MetaVersion,
	// MetaPipeline, MetaWorkarounds) and in the export metadata.
	Provenance *provenance.Record
	// Optimize selects the graph optimizer (default: on unless the
	// disable-optimization table names the model class; opt_hook.go).
	Optimize OptimizeMode
	// OptimizeOptions configure the optimizer (zero value: its defaults).
	OptimizeOptions opt.Options
}

func (o Options) opset() int {
	if o.Opset == 0 {
		return DefaultOpset
	}
	return o.Opset
}

// Model is an emitted model: the proto plus the initializers whose bytes are
// still in their weight source (read when the model is written).
type Model struct {
	Proto *pb.ModelProto
	// Inputs and Outputs are the graph's user input and output names, in order.
	Inputs, Outputs []string
	// Optimization says whether the optimizer ran and what it did.
	Optimization Optimization
	// OnWrite, when set, is called as Write streams the weights into the
	// external-data file, with its path and the bytes written so far.
	OnWrite func(path string, written int64)
	weights []*pendingWeight
}

// Emit lowers p (after the ONNX pipeline) to an ONNX model.
func Emit(p *ir.Program, opts Options) (*Model, error) {
	opset := opts.opset()
	if err := CheckOpset(opset); err != nil {
		return nil, err
	}
	res := newResolver(opset)
	if err := checkCoverageWith(p, res); err != nil {
		return nil, err
	}
	b := newBuilder(p, opset)
	g := &pb.GraphProto{Name: strPtr("main_graph")}
	m := &Model{}

	inNames, outNames, err := ioNames(p)
	if err != nil {
		return nil, err
	}
	// Graph inputs and initializers.
	sig := p.Signature
	ui := 0
	for i, v := range p.Main.Inputs {
		spec := ir.InputSpec{Kind: ir.UserInput}
		if i < len(sig.Inputs) {
			spec = sig.Inputs[i]
		}
		switch spec.Kind {
		case ir.UserInput:
			name := inNames[ui]
			ui++
			if err := b.reserve(name); err != nil {
				return nil, fmt.Errorf("graph input %%%s: %w", v.Name, err)
			}
			vi, err := valueInfo(name, v.Type)
			if err != nil {
				return nil, fmt.Errorf("graph input %%%s: %w", v.Name, err)
			}
			g.Input = append(g.Input, vi)
			b.names[v] = name
			m.Inputs = append(m.Inputs, name)
			if t := v.Tensor(); t != nil {
				for d, e := range t.Shape {
					if s, ok := e.Name(); ok {
						if _, seen := b.symSrc[s]; !seen {
							b.symSrc[s] = [2]any{name, d}
						}
					}
				}
			}
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
			w := p.Weight(spec.Target)
			if w == nil {
				return nil, fmt.Errorf("graph input %%%s: weight %q not in the program", v.Name, spec.Target)
			}
			if err := b.reserve(spec.Target); err != nil {
				return nil, fmt.Errorf("initializer %q: %w", spec.Target, err)
			}
			tp, pw, err := initializer(w, opts)
			if err != nil {
				return nil, fmt.Errorf("initializer %q: %w", w.Name, err)
			}
			g.Initializer = append(g.Initializer, tp)
			if pw != nil {
				m.weights = append(m.weights, pw)
			}
			b.names[v] = spec.Target
		case ir.ConstantInput:
			// A literal input: materialized as a constant.
			n, err := b.literal(spec.Value, v.Type)
			if err != nil {
				return nil, fmt.Errorf("constant input %%%s: %w", v.Name, err)
			}
			b.names[v] = n
			ui++
		default:
			return nil, fmt.Errorf("graph input %%%s: %s inputs are not supported by the ONNX target", v.Name, spec.Kind)
		}
	}

	// Outputs: only user outputs, named from the signature (ONNX-S01), made
	// distinct from inputs (ONNX-S02) and from each other.
	outs := p.Main.Outputs()
	type gout struct {
		name string
		v    *ir.Value
	}
	var gouts []gout
	oi := 0
	inputSet := map[string]bool{}
	for _, n := range m.Inputs {
		inputSet[n] = true
	}
	for i, a := range outs {
		kind := ir.UserOutput
		if i < len(sig.Outputs) {
			kind = sig.Outputs[i].Kind
		}
		if kind != ir.UserOutput && kind != ir.LossOutput {
			continue
		}
		if a.Kind != ir.ArgValue {
			return nil, fmt.Errorf("output %d is a literal (%s); ONNX graphs output tensors only", i, a)
		}
		name := outNames[oi]
		oi++
		gouts = append(gouts, gout{name, a.Value})
	}
	for i := range gouts {
		name := gouts[i].name
		if inputSet[name] {
			// ONNX-S02: a name shared by an input and an output.
			gouts[i].name = "output." + name
		}
	}
	for i, o := range gouts {
		if err := b.reserve(o.name); err != nil {
			return nil, fmt.Errorf("graph output %d: %w", i, err)
		}
		if _, taken := b.reserved[o.v]; !taken && o.v.Def != nil {
			b.reserved[o.v] = o.name
		}
	}
	// Rename inputs that clash with outputs (ONNX-S02: input.<n>).
	for i, vi := range g.Input {
		for _, o := range gouts {
			if o.name == "output."+vi.GetName() {
				nn := "input." + vi.GetName()
				if err := b.reserve(nn); err != nil {
					return nil, err
				}
				for v, n := range b.names {
					if n == vi.GetName() {
						b.names[v] = nn
					}
				}
				for s, src := range b.symSrc {
					if src[0] == vi.GetName() {
						b.symSrc[s] = [2]any{nn, src[1]}
					}
				}
				g.Input[i].Name = &nn
				m.Inputs[i] = nn
			}
		}
	}

	// Nodes. A node whose lowering refuses it is recorded and its results
	// get placeholder names, so every such node is reported at once.
	failed := newMissingOps(opset)
	for _, n := range p.Main.Nodes() {
		if n.IsReturn() {
			continue
		}
		b.cur = n
		f, err := res.lookup(n.Op)
		if err != nil {
			return nil, n.Errorf("%v", err)
		}
		err = complexUnlowered(n)
		if err == nil {
			err = f(b, n)
		}
		if err != nil {
			failed.Failed = append(failed.Failed, LoweringFailure{Op: n.Op.String(), Node: "%" + firstResult(n), Origin: nodeOrigin(n), Reason: err.Error()})
			for _, r := range n.Results {
				if _, ok := b.names[r]; !ok {
					b.names[r] = b.fresh("unlowered." + r.Name)
				}
			}
			continue
		}
		for _, r := range n.Results {
			if _, ok := b.names[r]; !ok && r.NumUses() > 0 {
				return nil, n.Errorf("lowering to ONNX left result %%%s undefined", r.Name)
			}
		}
	}
	b.cur = nil
	if !failed.empty() {
		sortFailures(failed.Failed)
		return nil, failed
	}

	// Graph outputs (ONNX-S01: one value feeding two outputs, or an input
	// passed through, gets an Identity so every output is distinct).
	for _, o := range gouts {
		src, err := b.Value(o.v)
		if err != nil {
			return nil, fmt.Errorf("graph output %s: %w", o.name, err)
		}
		if src != o.name {
			b.add("Identity", []string{src}, []string{o.name}, nil)
		}
		vi, err := valueInfo(o.name, o.v.Type)
		if err != nil {
			return nil, fmt.Errorf("graph output %s: %w", o.name, err)
		}
		g.Output = append(g.Output, vi)
		m.Outputs = append(m.Outputs, o.name)
	}
	g.Node = b.nodes

	irv := irVersionForOpset(opset)
	for _, t := range g.Initializer {
		if v := minIRForType(pb.TensorProto_DataType(t.GetDataType())); v > irv {
			irv = v
		}
	}
	if opts.Provenance != nil && opts.Provenance.Workarounds == nil {
		rec := *opts.Provenance
		rec.Workarounds = []provenance.Workaround{}
		opts.Provenance = &rec
	}
	meta, err := exportMetadata(p, m, opset, opts.Provenance)
	if err != nil {
		return nil, err
	}
	props := []*pb.StringStringEntryProto{{Key: strPtr(MetadataKey), Value: &meta}}
	producerVersion := opts.ProducerVersion
	if rec := opts.Provenance; rec != nil {
		if producerVersion == "" {
			producerVersion = rec.Version
		}
		wj, err := json.Marshal(rec.Workarounds)
		if err != nil {
			return nil, err
		}
		props = append(props,
			&pb.StringStringEntryProto{Key: strPtr(MetaVersion), Value: strPtr(rec.Version)},
			&pb.StringStringEntryProto{Key: strPtr(MetaPipeline), Value: strPtr(rec.Pipeline)},
			&pb.StringStringEntryProto{Key: strPtr(MetaWorkarounds), Value: strPtr(string(wj))})
	}
	if producerVersion == "" {
		producerVersion = provenance.Version()
	}
	m.Proto = &pb.ModelProto{
		IrVersion:       &irv,
		ProducerName:    strPtr("fxport"),
		ProducerVersion: &producerVersion,
		Graph:           g,
		OpsetImport:     collectOpsets(g, opset),
		MetadataProps:   props,
	}
	if err := m.optimize(p, opts); err != nil {
		return nil, err
	}
	if err := CheckInvariants(m.Proto); err != nil {
		return nil, fmt.Errorf("emitted model violates an invariant: %w", err)
	}
	return m, nil
}

func strPtr(s string) *string { return &s }

// loweringIndex resolves ops to lowerings once per op: pm's translations
// first, then the table.
type loweringIndex struct {
	trans map[ir.Op]*pm.Translation
}

func translationIndex() *loweringIndex {
	ix := &loweringIndex{trans: map[ir.Op]*pm.Translation{}}
	for _, t := range pm.Default.Translations.All() {
		for _, o := range t.Ops() {
			if _, dup := ix.trans[o]; !dup {
				ix.trans[o] = t
			}
		}
	}
	return ix
}

func (ix *loweringIndex) lookup(op ir.Op, opset int) (Lowering, error) {
	if tr := ix.trans[op]; tr != nil {
		return func(b *Builder, n *ir.Node) error { return tr.Impl.Translate(n, b) }, nil
	}
	return resolve(op, opset)
}

// resolver memoizes lookups of one export (one opset).
type resolver struct {
	ix    *loweringIndex
	opset int
	memo  map[ir.Op]resolved
}

type resolved struct {
	f   Lowering
	err error
}

func newResolver(opset int) *resolver {
	return &resolver{ix: translationIndex(), opset: opset, memo: map[ir.Op]resolved{}}
}

func (r *resolver) lookup(op ir.Op) (Lowering, error) {
	if x, ok := r.memo[op]; ok {
		return x.f, x.err
	}
	f, err := r.ix.lookup(op, r.opset)
	r.memo[op] = resolved{f, err}
	return f, err
}

// checkCoverage lists every op of the program that cannot be lowered.
func checkCoverage(p *ir.Program, opset int) error {
	return checkCoverageWith(p, newResolver(opset))
}

func checkCoverageWith(p *ir.Program, res *resolver) error {
	e := newMissingOps(res.opset)
	for _, g := range p.Graphs() {
		for _, n := range g.Nodes() {
			if n.IsReturn() {
				continue
			}
			if _, err := res.lookup(n.Op); err != nil {
				why := ""
				if !unsupported.Has(n.Op) && len(versions(n.Op)) > 0 {
					why = err.Error()
				}
				e.addOp(n, why)
			}
		}
	}
	if !e.empty() {
		return e
	}
	return nil
}

func firstResult(n *ir.Node) string {
	if len(n.Results) > 0 {
		return n.Results[0].Name
	}
	return n.Short()
}

// ioNames returns the user input and output names: those flat-io-names
// recorded (io.input_names / io.output_names), else the value names.
func ioNames(p *ir.Program) (ins, outs []string, err error) {
	ins, outs, ok, err := p.IONames()
	if err != nil {
		return nil, nil, fmt.Errorf("io names: %w", err)
	}
	if ok {
		return ins, outs, nil
	}
	sig := p.Signature
	for i, v := range p.Main.Inputs {
		if i >= len(sig.Inputs) || sig.Inputs[i].Kind == ir.UserInput || sig.Inputs[i].Kind == ir.ConstantInput {
			ins = append(ins, v.Name)
		}
	}
	for i, a := range p.Main.Outputs() {
		if i < len(sig.Outputs) && sig.Outputs[i].Kind != ir.UserOutput && sig.Outputs[i].Kind != ir.LossOutput {
			continue
		}
		name := fmt.Sprintf("output_%d", i)
		if a.Kind == ir.ArgValue {
			name = a.Value.Name
		}
		outs = append(outs, name)
	}
	return ins, outs, nil
}

// valueInfo is a graph input/output declaration: element type and shape,
// symbolic dims as dim_param.
func valueInfo(name string, t ir.Type) (*pb.ValueInfoProto, error) {
	var dt ir.DType
	var shape []*pb.TensorShapeProto_Dimension
	switch tt := t.(type) {
	case *ir.TensorType:
		dt = tt.DType
		for _, d := range tt.Shape {
			if c, ok := d.Const(); ok {
				shape = append(shape, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: c}})
			} else {
				shape = append(shape, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: d.String()}})
			}
		}
		if dt.IsComplex() {
			// The real form of a complex tensor (ops_complex.go).
			dt = complexReal(dt)
			shape = append(shape, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: 2}})
		}
	case *ir.SymIntType:
		dt = ir.Int64
	case *ir.SymBoolType:
		dt = ir.Bool
	case *ir.SymFloatType:
		dt = ir.Float32
	default:
		return nil, fmt.Errorf("type %s has no ONNX tensor form", t)
	}
	et, err := elemType(dt)
	if err != nil {
		return nil, err
	}
	e := int32(et)
	return &pb.ValueInfoProto{Name: &name, Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{
		ElemType: &e, Shape: &pb.TensorShapeProto{Dim: shape}}}}}, nil
}

// collectOpsets is the final opset-import pass: the default domain plus every
// other domain a node uses.
func collectOpsets(g *pb.GraphProto, opset int) []*pb.OperatorSetIdProto {
	domains := map[string]bool{}
	for _, n := range g.Node {
		if d := n.GetDomain(); d != "" {
			domains[d] = true
		}
	}
	v := int64(opset)
	out := []*pb.OperatorSetIdProto{{Domain: strPtr(""), Version: &v}}
	for _, d := range sortedKeys(domains) {
		one := int64(1)
		out = append(out, &pb.OperatorSetIdProto{Domain: strPtr(d), Version: &one})
	}
	return out
}

// exportMetadata is the JSON stored under MetadataKey (ONNX-S03).
func exportMetadata(p *ir.Program, m *Model, opset int, rec *provenance.Record) (string, error) {
	md := struct {
		Producer        string             `json:"producer"`
		Provenance      *provenance.Record `json:"provenance,omitempty"`
		Opset           int                `json:"opset"`
		InputNames      []string           `json:"input_names"`
		OutputNames     []string           `json:"output_names"`
		UserOutputCount int                `json:"user_output_count"`
		Program         map[string]string  `json:"program_meta,omitempty"`
	}{Producer: "fxport", Provenance: rec, Opset: opset, InputNames: m.Inputs, OutputNames: m.Outputs, UserOutputCount: len(m.Outputs)}
	if md.InputNames == nil {
		md.InputNames = []string{}
	}
	for _, kv := range p.Meta.Entries() {
		if md.Program == nil {
			md.Program = map[string]string{}
		}
		md.Program[kv.Key] = kv.Value
	}
	out, err := json.Marshal(md) // map keys are sorted by encoding/json
	if err != nil {
		return "", err
	}
	return string(out), nil
}
