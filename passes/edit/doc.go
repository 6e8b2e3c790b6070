// Package edit holds the building blocks the workaround passes of every
// target share, so each lives in one place: a builder that keeps the first
// error (Builder), symbolic-size arithmetic on SymInt arguments, shapes and
// symbolic expressions materialized as operands (SymArg, Reshape,
// InsertOnes), in-place replacement and retyping of FX nodes
// (ReplaceInplace, Retype), and the rewrites two targets apply alike
// (BucketizeCount, SearchsortedCount, CumExtreme).
//
// It depends on ir and pm only; the stage packages (passes/dynamo,
// passes/onnxfix, passes) build on it.
package edit
