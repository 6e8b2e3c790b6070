package pt2schema

// Decoding of symbolic values, tensor metadata and program-level scalars.

// DecodeSymExpr reads a SymExpr.
func DecodeSymExpr(d *Decoder) (SymExpr, error) {
	var e SymExpr
	seen := false
	err := d.Object(func(key string) error {
		switch key {
		case "expr_str":
			seen = true
			var err error
			e.ExprStr, err = d.Str()
			return err
		case "hint":
			if d.IsNull() {
				return nil
			}
			return d.Union("SymExprHint", func(tag string) (bool, error) {
				var err error
				switch tag {
				case "as_int":
					e.HintKind = HintInt
					e.HintInt, err = d.Int()
				case "as_bool":
					e.HintKind = HintBool
					e.HintBool, err = d.Bool()
				case "as_float":
					e.HintKind = HintFloat
					e.HintFloat, err = d.Float()
				default:
					return false, nil
				}
				return true, err
			})
		}
		return nil
	})
	if err == nil && !seen {
		err = d.Errorf("SymExpr has no expr_str")
	}
	return e, err
}

// DecodeSymInt reads a SymInt union (a bare integer is accepted too).
func DecodeSymInt(d *Decoder) (SymInt, error) {
	var s SymInt
	if c := d.Peek(); c == '-' || c >= '0' && c <= '9' {
		v, err := d.Int()
		return SymInt{Int: v}, err
	}
	err := d.Union("SymInt", func(tag string) (bool, error) {
		var err error
		switch tag {
		case "as_expr":
			s.IsExpr = true
			s.Expr, err = DecodeSymExpr(d)
		case "as_int":
			s.Int, err = d.Int()
		default:
			return false, nil
		}
		return true, err
	})
	return s, err
}

// DecodeSymBool reads a SymBool union.
func DecodeSymBool(d *Decoder) (SymBool, error) {
	var s SymBool
	err := d.Union("SymBool", func(tag string) (bool, error) {
		var err error
		switch tag {
		case "as_expr":
			s.IsExpr = true
			s.Expr, err = DecodeSymExpr(d)
		case "as_bool":
			s.Bool, err = d.Bool()
		default:
			return false, nil
		}
		return true, err
	})
	return s, err
}

// DecodeSymFloat reads a SymFloat union.
func DecodeSymFloat(d *Decoder) (SymFloat, error) {
	var s SymFloat
	err := d.Union("SymFloat", func(tag string) (bool, error) {
		var err error
		switch tag {
		case "as_expr":
			s.IsExpr = true
			s.Expr, err = DecodeSymExpr(d)
		case "as_float":
			s.Float, err = d.Float()
		default:
			return false, nil
		}
		return true, err
	})
	return s, err
}

func (d *Decoder) symInts() ([]SymInt, error) {
	return gather(d, &d.symScratch, func() (SymInt, error) { return DecodeSymInt(d) })
}

// DecodeTensorMeta reads a TensorMeta (also the v1 {"meta": {...}} wrapper).
// Missing fields take torch's defaults: strided layout, CPU, offset 0.
func DecodeTensorMeta(d *Decoder) (TensorMeta, error) {
	m := TensorMeta{Layout: 7, Device: Device{Type: "cpu"}}
	seenDType, seenSizes := false, false
	err := d.Object(func(key string) error {
		var err error
		switch key {
		case "meta":
			m, err = DecodeTensorMeta(d)
			seenDType, seenSizes = true, true
		case "dtype":
			seenDType = true
			m.DType, err = d.Enum("ScalarType", ScalarTypeNames)
		case "sizes":
			seenSizes = true
			m.Sizes, err = d.symInts()
		case "requires_grad":
			m.RequiresGrad, err = d.Bool()
		case "device":
			m.Device, err = DecodeDevice(d)
		case "strides":
			m.Strides, err = d.symInts()
		case "storage_offset":
			m.StorageOffset, err = DecodeSymInt(d)
		case "layout":
			m.Layout, err = d.Enum("Layout", LayoutNames)
		}
		return err
	})
	if err == nil && (!seenDType || !seenSizes) {
		err = d.Errorf("TensorMeta needs dtype and sizes")
	}
	return m, err
}

// DecodeRangeConstraint reads a RangeConstraint.
func DecodeRangeConstraint(d *Decoder) (RangeConstraint, error) {
	var r RangeConstraint
	err := d.Object(func(key string) error {
		var err error
		switch key {
		case "min_val":
			r.Min, r.HasMin, err = d.IntOrInf()
		case "max_val":
			r.Max, r.HasMax, err = d.IntOrInf()
		}
		return err
	})
	return r, err
}

// DecodeSchemaVersion reads a SchemaVersion.
func DecodeSchemaVersion(d *Decoder) (SchemaVersion, error) {
	var v SchemaVersion
	seen := false
	err := d.Object(func(key string) error {
		var err error
		switch key {
		case "major":
			seen = true
			v.Major, err = d.Int()
		case "minor":
			v.Minor, err = d.Int()
		}
		return err
	})
	if err == nil && !seen {
		err = d.Errorf("schema_version has no major")
	}
	return v, err
}
