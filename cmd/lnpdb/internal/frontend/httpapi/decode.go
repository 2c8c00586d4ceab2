package httpapi

// The request bodies of the REST lookups are tiny objects of known fields;
// decodeFast reads the usual ones without reflection. It only accepts what
// encoding/json would decode to the same values (FuzzDecodeFast holds it
// to that) and leaves everything else — unknown or differently cased field
// names, escapes, non-ASCII strings, null, numbers, nesting — to
// encoding/json, whose answers and errors are the contract.

// decodeFast decodes data into v, a *lrnRequest or *phoneRequest, and
// reports whether it could; when it could not, v may be partly set and the
// caller decodes data with encoding/json.
func decodeFast(data []byte, v any) bool {
	var lr *lrnRequest
	var pr *phoneRequest
	switch req := v.(type) {
	case *lrnRequest:
		lr = req
	case *phoneRequest:
		pr = req
	default:
		return false
	}
	d := fastDecoder{b: data}
	return d.members(func(key []byte) bool {
		var ok bool
		switch {
		case string(key) == "phone_number":
			s, ok := d.str()
			if !ok {
				return false
			}
			p := string(s)
			if lr != nil {
				lr.PhoneNumber = &p
			} else {
				pr.PhoneNumber = &p
			}
		case string(key) == "include_enhanced_lrn" && lr != nil:
			lr.IncludeEnhancedLRN, ok = d.bool()
			return ok
		case string(key) == "messaging_lookup" && lr != nil:
			lr.MessagingLookup, ok = d.bool()
			return ok
		default:
			return false
		}
		return true
	})
}

type fastDecoder struct {
	b []byte
	i int
}

func (d *fastDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) byte(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (d *fastDecoder) end() bool {
	d.space()
	return d.i == len(d.b)
}

// str reads a string of printable ASCII without escapes.
func (d *fastDecoder) str() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
		d.i++
	}
	return nil, false
}

func (d *fastDecoder) bool() (v, ok bool) {
	rest := d.b[d.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		d.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		d.i += 5
		return false, true
	}
	return false, false
}
