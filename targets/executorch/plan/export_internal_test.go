package plan

// WholeLoopOptions returns opt planning every value inside a loop region
// for the loop's whole span (the rule before per-iteration lifetimes), for
// the tests that measure the difference.
func WholeLoopOptions(opt Options) Options {
	opt.wholeLoops = true
	return opt
}
