package passes

import "github.com/fxport/fxport/ir"

// ET-L01 decompositions whose target is another overload of the same
// computation: inference batch norm and arange.start.

var (
	etlOpNativeBatchNorm  = ir.OpAtenNativeBatchNorm
	etlOpBatchNormNoTrain = ir.OpAten_NativeBatchNormLegitNoTraining
	etlOpArangeStart      = ir.OpAtenArangeStart
	etlOpArangeStartStep  = ir.OpAtenArangeStartStep
)

// etlCoreFactoryOrNorm rewrites native_batch_norm in inference form (not
// training, both running statistics given) to
// _native_batch_norm_legit_no_training, and arange.start to
// arange.start_step with step 1. It returns the first result of the new
// node, or nil (and no error) when n has no core form for its arguments.
func etlCoreFactoryOrNorm(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	kw := etlNamedArgs(n)
	var op ir.Op
	switch n.Op {
	case etlOpNativeBatchNorm:
		tr := kw["training"]
		if tr.Kind != ir.ArgBool || tr.Bool() || kw["running_mean"].IsNone() || kw["running_var"].IsNone() {
			return nil, nil
		}
		delete(kw, "training")
		op = etlOpBatchNormNoTrain
	case etlOpArangeStart:
		kw["step"] = ir.IntArg(1)
		op = etlOpArangeStartStep
	default:
		return nil, nil
	}
	nn, err := b.CallKw(op, nil, kw)
	if err != nil {
		return nil, err
	}
	return nn.Results[0], nil
}
