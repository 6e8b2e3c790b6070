// Package sym is fxport's symbolic-shape engine: canonical symbolic integer
// expressions over torch's size symbols (backed "s0", "s1", ... with a
// trace-time hint; unbacked "u0", ... from data-dependent ops), value ranges,
// and the reasoning shape inference, legalization guards and memory planning
// need.
//
// # Expressions
//
// An Expr is an immutable value. Constants that fit in an int64 live inline
// (Const never allocates) and symbols are interned, so both are cheap; other
// expressions share an immutable node. The zero Expr is invalid
// (IsValid() == false); every constructor propagates invalid operands, and
// returns the invalid Expr for a sort error (a boolean where an integer is
// needed or vice versa, a negative Pow exponent, Min/Max of nothing, a symbol
// name that is not an identifier).
//
// Every constructor returns a canonical form:
//
//   - constants are folded everywhere; // and % follow Python (floor toward
//     -inf; the remainder has the sign of the divisor);
//   - sums and products are flattened, their operands sorted in a fixed total
//     order (Compare), like terms collected (2*s0 + s0 = 3*s0) and like
//     factors combined (s0*s0 = s0**2); x+0, x*1, x*0 simplify;
//   - products of sums are expanded ((s0 + 1)*(s1 + 1) = s0*s1 + s0 + s1 + 1,
//     (s0 + 1)**2 = s0**2 + 2*s0 + 1) unless the result would exceed 256
//     terms; a constant times a sum is always distributed;
//   - x // c and Mod(x, c) for a constant c > 0: terms of x that are multiples
//     of c are pulled out ((2*s0 + 3)//2 = s0 + 1, (4*s0 + s1)//4 =
//     s0 + s1//4, Mod(4*s0 + s1 + 5, 4) = Mod(s1 + 1, 4)),
//     common factors are cancelled ((2*s0 + 2)//4 = (s0 + 1)//2,
//     Mod(2*s0, 4) = 2*Mod(s0, 2)), x//1 = x, Mod(x, 1) = 0,
//     (x//a)//b = x//(a*b), Mod(Mod(x, a*b), b) = Mod(x, b); a negative
//     divisor is made positive (x // -c = (-x) // c). Division by a constant
//     0 stays unevaluated; 0 // y and Mod(0, y) fold to 0;
//   - CeilDiv(a, c) for a constant c > 0 is (a + c - 1)//c, otherwise
//     -((-a)//b);
//   - Min/Max are flattened, deduplicated, constants merged, an operand that
//     is a constant offset of another and dominated is dropped
//     (Max(s0, s0 + 1) = s0 + 1), and a single operand collapses;
//   - Pow folds constants (up to 4096-bit results), x**0 = 1, x**1 = x,
//     (x**a)**b = x**(a*b), (c*x)**n = c**n*x**n;
//   - comparisons are normalised to d == 0, d != 0 or d <= 0 (a < b is
//     a - b + 1 <= 0, a > b is b < a, a >= b is b <= a), with common factors
//     divided out (2*s0 <= 7 is s0 <= 3; 2*s0 == 3 is False) and the sign of
//     equalities fixed, so equal conditions print equally; comparisons of
//     constants fold and Eq(a, a) is True;
//   - Not is pushed into comparisons and through And/Or; And/Or are
//     flattened, deduplicated, sorted, absorb True/False, and detect x and
//     Not(x).
//
// Exprs are safe for concurrent use. Compare them with Equal, not ==: ==
// on Expr values is reliable only for constants and symbols. Hash and Compare
// give a structural hash and a total order for maps and sorting.
//
// Equal is structural equality of canonical forms. It is sound (Equal
// expressions are the same function of their symbols) but incomplete: e.g.
// Max(s0, 1) and s0 are not Equal even when s0 >= 1 is known; use
// Env.Simplify or Env.StaticallyKnownTrue for range-dependent facts.
//
// # Overflow
//
// Constant folding is exact and never panics: an integer constant that does
// not fit in an int64 is kept as an arbitrary-precision ("big") constant.
// Const() reports false for it, it prints as its decimal value and Parse
// reads it back. Pow does not fold results wider than 4096 bits (2**100000
// stays a Pow), and products of sums that would expand beyond 256 terms stay
// unexpanded; both remain canonical and round-trip. Exponent sums beyond
// int64 (x**a * x**b) are split into several factors. Eval reports
// ErrOverflow when a value does not fit in an int64. Bounds saturates to the
// sound side: a lower bound that overflows upward becomes MaxInt64, an upper
// bound +inf (and symmetrically).
//
// # Printed grammar
//
// String prints one canonical plain form, compatible with Python/sympy
// syntax and precedence (** binds tighter than unary minus, which binds
// tighter than * and //, then + and -, then comparisons):
//
//	integer   := decimal digits, with a leading "-" when negative   "7", "-3"
//	symbol    := [A-Za-z_][A-Za-z0-9_]*                              "s0", "u3"
//	sum       := term (" + " term | " - " term)* [(" + " | " - ") integer]
//	                                         "s0**2 + 2*s0 + 1", "-s0 + s1 - 1"
//	term      := [coef "*"] factor ("*" factor)*   coefficient -1 is "-"
//	                                         "2*s0", "-s0*s1", "2*(s0//3)"
//	power     := atom "**" integer                   "s0**2", "(s0 + s1)**300"
//	floordiv  := operand "//" atom                   "s0//2", "(s0 + 1)//2"
//	call      := "Mod(" a ", " b ")" | "Min(" a ", " b ... ")" | "Max(" ... ")"
//	             | "And(" c ", " c ... ")" | "Or(" ... ")"
//	compare   := L " == " R | L " != " R | L " <= " R
//	                                         "s0 == 4", "s1 <= s0", "2 <= s0"
//	bool      := "True" | "False"
//
// Parentheses are added only where precedence requires them. Sum terms come
// in Compare order by monomial (higher degree first), the constant last;
// Min/Max/And/Or operands in Compare order (constants first: "Max(1, s0)").
// In a comparison, terms with positive coefficients are on the left and the
// rest (negated) with the constant on the right; if there is no positive term
// (only for <=) the constant is on the left: "2 <= s0". Strict and
// greater-than comparisons are printed in their normalised <= form
// (Lt(s0, 8) prints "s0 <= 7").
//
// # Parse
//
// Parse accepts the printed form and what torch/sympy print with str(): the
// operators + - * // % ** (non-negative constant exponents), unary - and +,
// comparisons < <= > >= == != (chained comparisons are conjunctions),
// & | ~ and the keywords and, or, not on conditions, parentheses, True/False
// (also true/false), and the functions Mod, PythonMod, FloorDiv, CeilDiv,
// Min, Max, Pow, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not, Identity. It also
// accepts sympy srepr as written by torch.export: Symbol('s0', integer=True,
// positive=True) (keyword arguments are ignored), Integer(-3), Add(...),
// Mul(...), Pow(..., Integer(2)), FloorDiv, Mod/PythonMod, Max, Min,
// StrictLessThan, LessThan, StrictGreaterThan, GreaterThan, Equality,
// Unequality, BooleanTrue(), BooleanFalse(), Zero(), One(), NegativeOne(),
// Rational(p, q) with an integral value. A true division (a / b,
// IntTrueDiv(a, b), FloatTrueDiv(a, b), with ToFloat(x) read as x) is
// accepted only directly under CeilToInt/ceiling (giving CeilDiv) or
// FloorToInt/floor (giving FloorDiv); TruncToInt of a division is rejected.
// Errors are *ParseError values with the byte offset and what was expected.
// Parse never panics, and Parse(e.String()) is Equal to e.
//
// # Ranges
//
// Bound and Range model torch's ValueRanges ("VR[2, int_oo]" prints as
// "[2, inf]"). An Env records per-symbol ranges, hints and whether a symbol
// is unbacked; Env.Bounds computes sound interval bounds of any expression,
// StaticallyKnownTrue/False decide conditions when the ranges allow it, and
// EvalHint evaluates at the trace-time hints.
package sym
