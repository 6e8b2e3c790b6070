package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// BackendID is the delegate id of the CUDA backend.
const BackendID = emit.CUDABackendID

// Keys returns the named-data keys of a compiled partition:
// <sha256(so)>_so_blob and <sha256(weights)>_weights_blob (pte-format.md
// §9.1). Each delegate's processed bytes name its own two keys, so the
// partitions of one program never share an entry unless their bytes are
// equal.
func Keys(c *Compiled) (so, weights string, err error) {
	s, err := digest(c.SO)
	if err != nil {
		return "", "", err
	}
	w, err := digest(c.Weights)
	if err != nil {
		return "", "", err
	}
	return hex.EncodeToString(s[:]) + "_so_blob", hex.EncodeToString(w[:]) + "_weights_blob", nil
}

// digest is l's sha256: its Digest, else hashed as a stream.
func digest(l pte.Lazy) ([32]byte, error) {
	if l.Digest != nil {
		return *l.Digest, nil
	}
	if l.Open == nil {
		return [32]byte{}, fmt.Errorf("cuda: %s: no bytes", l.Name)
	}
	r, err := l.Open()
	if err != nil {
		return [32]byte{}, fmt.Errorf("cuda: %s: %w", l.Name, err)
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return [32]byte{}, fmt.Errorf("cuda: %s: %w", l.Name, err)
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d, nil
}

// Package emits p — the output of the executorch.cuda pipeline, lowered
// and memory-planned — as the .pte program, and returns the .ptd named
// data beside it. calls are p's CudaBackend delegate calls in graph order
// (FindCalls), compiled[i] is what calls[i]'s partition compiled to, and
// methods[i] its compile spec method_name (ET-B04).
//
// The lowered main graph is emitted by emit.Program: its
// et_copy::_h2d_copy.out / _d2h_copy.out kernel calls, host nodes as
// portable kernels, planned tensors and each delegate call as a
// DelegateCall of its own CudaBackend delegate (processed bytes, a segment
// = that partition's two named-data keys joined by "\n"). The host and
// device tensors are planned in arenas of their own, the device arena
// listed in non_const_buffer_device as CUDA (DeviceArenas). The .ptd
// entries are the partitions' libraries and weights blobs, streamed from
// the compile step's files (one entry per distinct key). p is not changed.
func Package(p *ir.Program, calls []*ir.Node, compiled []*Compiled, methods []string) (*pte.File, []pte.NamedTensor, error) {
	if len(calls) == 0 || len(compiled) != len(calls) || len(methods) != len(calls) {
		return nil, nil, fmt.Errorf("cuda: package: %d calls, %d compiled partitions, %d method names", len(calls), len(compiled), len(methods))
	}
	all := FindCalls(p)
	if len(all) != len(calls) {
		return nil, nil, fmt.Errorf("cuda: package: the program has %d CudaBackend calls, %d given", len(all), len(calls))
	}
	var data []pte.NamedTensor
	have := map[string]bool{}
	processed := make([][]byte, len(calls))
	for i, call := range calls {
		if call != all[i] {
			return nil, nil, call.Errorf("cuda: package: call %d is not the program's CudaBackend call %d (%s)", i, i, all[i].Short())
		}
		if err := CheckHost(p, call); err != nil {
			return nil, nil, err
		}
		soKey, wKey, err := Keys(compiled[i])
		if err != nil {
			return nil, nil, err
		}
		processed[i] = []byte(soKey + "\n" + wKey)
		for _, e := range []struct {
			key string
			l   pte.Lazy
		}{{soKey, compiled[i].SO}, {wKey, compiled[i].Weights}} {
			if have[e.key] {
				continue // equal bytes: ExecuTorch's named data store keeps one copy
			}
			have[e.key] = true
			l := e.l
			data = append(data, pte.NamedTensor{Key: e.key, Lazy: &l})
		}
	}
	q := p.Clone()
	qcalls := FindCalls(q)
	index := make(map[*ir.Node]int, len(qcalls))
	for i, c := range qcalls {
		index[c] = i
	}
	if _, err := DeviceArenas(q); err != nil {
		return nil, nil, err
	}
	f, err := emit.Program(q, emit.Options{CUDA: func(n *ir.Node) (*emit.CUDAPayload, error) {
		i, ok := index[n]
		if !ok {
			return nil, fmt.Errorf("not one of the program's %d CudaBackend calls", len(qcalls))
		}
		return &emit.CUDAPayload{Processed: processed[i], MethodName: methods[i]}, nil
	}})
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: %w", err)
	}
	return f, data, nil
}
