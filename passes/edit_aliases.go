package passes

import "github.com/fxport/fxport/passes/edit"

// Aliases of the shared rewrite helpers (passes/edit) under the names the
// ExecuTorch files have used since the helpers lived in this package; they go
// when the et_* files move into packages of their own.

var etInsertOnes = edit.InsertOnes
var etNormDim = edit.NormDim
var etOpPyAdd = edit.OpPyAdd
var etOpPyMod = edit.OpPyMod
var etOpTril = edit.OpTril
var etReshape = edit.Reshape
var etSameTypes = edit.SameTypes
var etShapeArg = edit.ShapeArg
var etSymArg = edit.SymArg
var fxRetype = edit.Retype
var newTP = edit.NewBuilder
var rewriteBucketizeCount = edit.BucketizeCount
var rewriteCumExtreme = edit.CumExtreme
var rewriteSearchsortedCount = edit.SearchsortedCount
var tpOpAddTensor = edit.OpAddTensor
var tpOpEqTensor = edit.OpEqTensor
var tpOpLeTensor = edit.OpLeTensor
var tpOpLogicalAnd = edit.OpLogicalAnd
var tpOpLogicalNot = edit.OpLogicalNot
var tpOpMatmul = edit.OpMatmul
var tpOpMulScalar = edit.OpMulScalar
var tpOpMulTensor = edit.OpMulTensor
var tpOpRepeatIntl = edit.OpRepeatIntl
var tpOpSafeSoftmax = edit.OpSafeSoftmax
var tpOpSumDim = edit.OpSumDim
var tpOpTranspose = edit.OpTranspose
