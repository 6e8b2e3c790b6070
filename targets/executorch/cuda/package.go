package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// BackendID is the delegate id of the CUDA backend.
const BackendID = emit.CUDABackendID

// Keys returns the named-data keys of a compiled partition:
// <sha256(so)>_so_blob and <sha256(weights)>_weights_blob.
func Keys(c *Compiled) (so, weights string) {
	s := sha256.Sum256(c.SO)
	w := sha256.Sum256(c.Weights)
	return hex.EncodeToString(s[:]) + "_so_blob", hex.EncodeToString(w[:]) + "_weights_blob"
}

// Package emits p — the output of the executorch.cuda pipeline, lowered
// and memory-planned, whose CudaBackend delegate call is call and whose
// partition compiled to c — as the .pte program, and returns the .ptd named
// data beside it. methodName is the compile spec method_name (ET-B04).
//
// The lowered main graph is emitted by emit.Program: its
// et_copy::_h2d_copy.out / _d2h_copy.out kernel calls, planned tensors and
// the delegate call as a DelegateCall of CudaBackend (processed bytes, a
// segment = the two named-data keys joined by "\n"). The device tensors (typed on
// Device) move from the planner's arena into an arena of their own, listed
// in non_const_buffer_device as CUDA (DeviceArenas). p is not changed.
func Package(p *ir.Program, call *ir.Node, c *Compiled, methodName string) (*pte.File, []pte.NamedTensor, error) {
	if err := CheckHost(p, call); err != nil {
		return nil, nil, err
	}
	soKey, wKey := Keys(c)
	q := p.Clone()
	qcall, err := FindCall(q)
	if err != nil {
		return nil, nil, err
	}
	if err := DeviceArenas(q); err != nil {
		return nil, nil, err
	}
	f, err := emit.Program(q, emit.Options{CUDA: func(n *ir.Node) (*emit.CUDAPayload, error) {
		if n != qcall {
			return nil, fmt.Errorf("not the program's CudaBackend call %s", qcall.Short())
		}
		return &emit.CUDAPayload{Processed: []byte(soKey + "\n" + wKey), MethodName: methodName}, nil
	}})
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: %w", err)
	}
	data := []pte.NamedTensor{{Key: soKey, Data: c.SO}, {Key: wKey, Data: c.Weights}}
	return f, data, nil
}
