package passes

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PrepareCUDA casts a traced program to bfloat16 for the CUDA backend and
// names its partitioner (ET-B03, ET-B04).
var PrepareCUDA = pm.RegisterBackendPrepare(&pm.BackendPrepare{
	ID:      "ET-B03",
	Name:    "cuda-prepare",
	Backend: "executorch.cuda",
	Doc: `prepare a traced program for the CUDA backend: float weights and inputs cast to bfloat16

The Python prepare_for_cuda (revision A) casts the model to bfloat16 with the
warning "ExecuTorch CUDA backend requires bfloat16" before tracing, and the
inputs follow the model dtype (DYN-S03). fxport does it on the traced
program, as a program transformation:

- every f16/f32/f64 parameter, buffer and lifted constant becomes bf16; its
  bytes are converted lazily (weight source bf16(src=…, from="f32"), round to
  nearest even, f64 through f32) when the emitter opens them;
- every f16/f32/f64 user input is cast to bf16 by a _to_copy at the top of
  the graph (the signature keeps the traced dtype);
- the types of the graph are re-inferred from the new inputs, so dtypes
  propagate exactly as torch's promotion would; ops with an explicit dtype
  argument (full(dtype=float32), _to_copy(dtype=…)) keep it, as they would
  in a trace of the bf16 model;
- a firing records the cast as a warning, with the counts.

Strided user inputs become contiguous (ET-B05). Nothing is moved: device
types appear only inside CUDA partitions (targets/executorch/cuda), as in
the later revisions ("AOTInductor targets the GPU regardless"); the GPU is
needed only by the AOTInductor compile step.

Partitioner: CudaPartitioner with compile spec method_name = the model
class name (ET-B04).`,
	Prepare:      prepareCUDA,
	Partitioners: []string{"CudaPartitioner"},
})

func etNeedsBF16(t *ir.TensorType) bool {
	return t != nil && (t.DType == ir.Float16 || t.DType == ir.Float32 || t.DType == ir.Float64)
}

func prepareCUDA(p *ir.Program, c *pm.Ctx) error {
	etMakeInputsContiguous(p)
	var weights, inputs int
	from := map[string]bool{}
	for i, v := range p.Main.Inputs {
		t := v.Tensor()
		if !etNeedsBF16(t) || i >= len(p.Signature.Inputs) {
			continue
		}
		spec := p.Signature.Inputs[i]
		switch spec.Kind {
		case ir.UserInput:
			// The input keeps its signature dtype (callers pass what the
			// model was traced with); a _to_copy at the top of the graph
			// casts it, as DYN-S03 casts the sample inputs.
			cast, err := etCastInputAtTop(p, v, ir.BFloat16)
			if err != nil {
				return fmt.Errorf("cuda-prepare: %w", err)
			}
			if !cast {
				continue
			}
			inputs++
			from[t.DType.Abbr()] = true
			continue
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
			w := p.Weight(spec.Target)
			if w == nil {
				return fmt.Errorf("cuda-prepare: input %%%s (%s %s) has no weight", v.Name, spec.Kind, spec.Target)
			}
			if w.Source != nil {
				src, err := newBF16Source(w.Source, w.Type.DType)
				if err != nil {
					return fmt.Errorf("cuda-prepare: weight %s: %w", w.Name, err)
				}
				w.Source = src
			}
			w.Type = w.Type.WithDType(ir.BFloat16)
			weights++
		default:
			continue
		}
		from[t.DType.Abbr()] = true
		v.SetType(t.WithDType(ir.BFloat16))
	}
	if err := etRetype(p.Main); err != nil {
		return fmt.Errorf("cuda-prepare: %w", err)
	}
	if weights+inputs == 0 {
		return nil
	}
	var fs []string
	for k := range from {
		fs = append(fs, k)
	}
	sort.Strings(fs)
	c.Stat("weights-cast-to-bf16", int64(weights))
	c.Stat("inputs-cast-to-bf16", int64(inputs))
	c.Fired(nil, fmt.Sprintf("warning: ExecuTorch CUDA backend requires bfloat16: cast %d weights and %d inputs from %s to bf16",
		weights, inputs, strings.Join(fs, "/")))
	return nil
}

// etCastInputAtTop inserts _to_copy(v, dtype=dt) before the first node of
// the main graph and makes every other user of v read it; false when v
// is already cast that way.
func etCastInputAtTop(p *ir.Program, v *ir.Value, dt ir.DType) (bool, error) {
	if v.NumUses() == 1 {
		for _, n := range p.Main.Nodes() {
			if n.Op == etOpToCopy && n.Arg("self").Value == v {
				if a := n.Arg("dtype"); a.Kind == ir.ArgDType && a.Int == int64(dt) {
					return false, nil // already cast (a second run of the prepare)
				}
			}
		}
	}
	b := ir.NewBuilder(p.Main)
	b.Pass = "cuda-prepare"
	if first := p.Main.First(); first != nil {
		b.SetInsertBefore(first)
	}
	n, err := b.CallKw(etOpToCopy, []ir.Arg{ir.ValueArg(v)}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
	if err != nil {
		return false, fmt.Errorf("casting input %%%s: %w", v.Name, err)
	}
	c := n.Result()
	v.ReplaceAllUsesWith(c)
	n.SetArg(0, ir.ValueArg(v))
	return true, nil
}
