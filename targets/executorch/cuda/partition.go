package cuda

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Device is the device CUDA partitions are typed on.
const Device = "cuda:0"

// DeviceProgram returns the CUDA partition of p: a clone in which every
// tensor (graph inputs, weights, node results) is typed on Device. The
// partition is the whole main graph: AOTInductor compiles every ATen op,
// and the only host work is the copies around it. Programs the packager
// cannot express yet are errors naming what is missing: non-tensor user
// inputs or outputs (SymInt inputs would have to stay on the host), control
// flow regions and mutated buffers.
func DeviceProgram(p *ir.Program) (*ir.Program, error) {
	for _, v := range p.Main.Inputs {
		if v.Tensor() == nil {
			return nil, fmt.Errorf("cuda partition: graph forward input %%%s is %s, not a tensor; non-tensor inputs would stay on the host, which the CUDA packager does not support yet", v.Name, v.Type)
		}
	}
	for i, o := range p.Main.Outputs() {
		if o.Kind != ir.ArgValue || o.Value.Tensor() == nil {
			return nil, fmt.Errorf("cuda partition: graph forward output %d is not a tensor value; the CUDA packager supports tensor outputs only", i)
		}
	}
	for i, o := range p.Signature.Outputs {
		if o.Kind != ir.UserOutput {
			return nil, fmt.Errorf("cuda partition: output %d (%s) is a %s; mutated buffers and inputs are not supported by the CUDA packager yet", i, o.Target, o.Kind)
		}
	}
	for _, n := range p.Main.Nodes() {
		for _, a := range n.Args {
			if a.Kind == ir.ArgGraph {
				return nil, fmt.Errorf("cuda partition: node %s has a region (control flow); not supported by the CUDA packager yet", n.Short())
			}
		}
	}
	d := p.Clone()
	onDevice := func(v *ir.Value) {
		if t := v.Tensor(); t != nil {
			c := *t
			c.Device = Device
			v.SetType(&c)
		}
	}
	for _, v := range d.Main.Inputs {
		onDevice(v)
	}
	for _, n := range d.Main.Nodes() {
		for _, r := range n.Results {
			onDevice(r)
		}
	}
	for _, w := range d.Weights {
		c := *w.Type
		c.Device = Device
		w.Type = &c
	}
	return d, nil
}
