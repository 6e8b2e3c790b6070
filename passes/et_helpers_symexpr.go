package passes

// Helpers shared by the ExecuTorch legalizations: turning a symbolic size
// expression into an operand a SymInt argument can take.

var ()
