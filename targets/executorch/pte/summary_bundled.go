package pte

// bundled prints a bundled program's test suites, every case with its
// inputs and expected outputs.
func (s *summary) bundled(b *Bundled) {
	s.p("bundled program: BP08 version %d, embedded program %d bytes, %d test suite(s)", b.Version, b.ProgramSize, len(b.TestSuites))
	for _, t := range b.TestSuites {
		s.p("  test suite %q: %d test case(s)", t.Method, len(t.Cases))
		for ci, c := range t.Cases {
			s.p("    case %d: %d input(s), %d expected output(s)", ci, len(c.Inputs), len(c.ExpectedOutputs))
			for i, v := range c.Inputs {
				s.p("      input %d: %s", i, v)
			}
			for i, v := range c.ExpectedOutputs {
				s.p("      expected output %d: %s", i, v)
			}
		}
	}
}
