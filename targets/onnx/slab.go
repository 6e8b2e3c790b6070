package onnx

import pb "github.com/fxport/fxport/targets/onnx/onnxpb"

// slabSize is how many nodes (and one-output lists) one slab allocation holds.
const slabSize = 1024

// slabs are what the Builder carves emitted nodes and one-output lists from:
// one allocation per slabSize nodes instead of two per node, which keeps the
// allocator and the garbage collector out of the emitter's hot path.
type slabs struct {
	nodes []pb.NodeProto
	outs  []string
}

// node returns a zeroed node.
func (s *slabs) node() *pb.NodeProto {
	if len(s.nodes) == 0 {
		s.nodes = make([]pb.NodeProto, slabSize)
	}
	n := &s.nodes[0]
	s.nodes = s.nodes[1:]
	return n
}

// oneOutput returns the list [name], its capacity capped so that an append
// to it copies instead of overwriting the next list in the slab.
func (s *slabs) oneOutput(name string) []string {
	if len(s.outs) == 0 {
		s.outs = make([]string, slabSize)
	}
	out := s.outs[0:1:1]
	out[0] = name
	s.outs = s.outs[1:]
	return out
}
