package httpapi

// decodeGraphQLFast reads the usual GraphQL request body — query and
// operationName without escapes, variables of strings, booleans and nulls,
// and Apollo's persistedQuery extension — without reflection, and reports
// whether it could. The usual extension, version 1 and a hash, it keeps as
// req.apq, not as maps (graphqlRequest.extensions makes them). Like decodeFast it accepts only what encoding/json
// decodes to the same values (FuzzDecodeGraphQLFast holds it to that); for
// anything else the caller decodes with encoding/json.
//
// The strings it keeps (query, operation name, hash, variables' names and
// values) are slices of one copy of data. The variables it keeps in
// req.vars, not in a map: graphqlRequest.variables makes the map when
// gqlgen needs it, graphqlRequest.variable reads one without.
func decodeGraphQLFast(data []byte, req *graphqlRequest) bool {
	d := fastDecoder{b: data}
	var text string // data as a string, made once the first string is kept
	str := func() (string, bool) {
		start := d.i + 1
		s, ok := d.str()
		if !ok {
			return "", false
		}
		if text == "" {
			text = string(data)
		}
		return text[start : start+len(s)], true
	}
	if !d.members(func(key []byte) bool {
		switch string(key) {
		case "query":
			q, ok := str()
			if ok {
				req.Query = &q
			}
			return ok
		case "operationName":
			if d.null() {
				req.OperationName = nil
				return true
			}
			op, ok := str()
			if ok {
				req.OperationName = &op
			}
			return ok
		case "variables":
			if d.null() {
				req.vars, req.varsSet = req.vars[:0], false
				return true
			}
			// encoding/json merges into a map it already holds: the
			// later of two values of one name wins, as variable reads.
			req.varsSet = true
			return d.members(func(name []byte) bool {
				v := gqlVar{kind: varNull}
				if !d.null() {
					if d.i < len(d.b) && d.b[d.i] == '"' {
						s, ok := str()
						if !ok {
							return false
						}
						v.kind, v.s = varString, s
					} else {
						b, ok := d.bool()
						if !ok {
							return false
						}
						v.kind, v.b = varBool, b
					}
				}
				if text == "" {
					text = string(data)
				}
				start := cap(data) - cap(name) // name is a slice of data
				v.name = text[start : start+len(name)]
				req.vars = append(req.vars, v)
				return true
			})
		case "extensions":
			if d.null() || req.Extensions != nil || req.apq != "" {
				return false // null, or a second extensions object: rare, encoding/json's
			}
			var hash string
			seen, version, hashed := false, false, false
			ok := d.members(func(name []byte) bool {
				if string(name) != "persistedQuery" || seen {
					return false
				}
				seen = true
				return d.members(func(field []byte) bool {
					switch string(field) {
					case "version":
						if !version && d.byte('1') && !d.digitNext() {
							version = true
							return true
						}
					case "sha256Hash":
						if !hashed {
							s, ok := str()
							hash, hashed = s, true
							return ok
						}
					}
					return false // a second one, or another member: encoding/json's
				})
			})
			if !ok {
				return false
			}
			if version && hash != "" {
				req.apq = hash // the usual: no maps made
				return true
			}
			req.Extensions = map[string]any{}
			if seen {
				pq := map[string]any{}
				if version {
					pq["version"] = float64(1)
				}
				if hashed {
					pq["sha256Hash"] = hash
				}
				req.Extensions["persistedQuery"] = pq
			}
			return true
		}
		return false
	}) {
		*req = graphqlRequest{vars: req.vars[:0]} // for encoding/json to decode afresh
		return false
	}
	return true
}

// members reads a JSON object, calling member for each name with the
// decoder at its value, and reports whether the object was read to its end
// with only white space after it when it is the whole input, or its
// closing brace otherwise.
func (d *fastDecoder) members(member func(name []byte) bool) bool {
	top := d.i == 0
	d.space()
	if !d.byte('{') {
		return false
	}
	d.space()
	if d.byte('}') {
		return !top || d.end()
	}
	for {
		name, ok := d.str()
		if !ok {
			return false
		}
		d.space()
		if !d.byte(':') {
			return false
		}
		d.space()
		if !member(name) {
			return false
		}
		d.space()
		if d.byte('}') {
			return !top || d.end()
		}
		if !d.byte(',') {
			return false
		}
		d.space()
	}
}

// null reads a JSON null.
func (d *fastDecoder) null() bool {
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// digitNext reports whether a digit follows: "1" must not be the start of
// "10".
func (d *fastDecoder) digitNext() bool {
	return d.i < len(d.b) && (d.b[d.i] >= '0' && d.b[d.i] <= '9' || d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E')
}

// decodeBulkFast reads the usual bulk request body — phone_numbers an
// array of strings without escapes, the two flags booleans — without
// reflection, into req.numbers, which all slice one copy of data. Like
// decodeFast it accepts only what encoding/json decodes to the same values
// (FuzzDecodeBulkFast holds it to that).
func decodeBulkFast(data []byte, req *bulkRequest) bool {
	d := fastDecoder{b: data}
	var text string // data as a string, made once the first number is seen
	ok := d.members(func(key []byte) bool {
		switch string(key) {
		case "phone_numbers":
			if !d.byte('[') {
				return false
			}
			nums := req.numbers[:0]
			d.space()
			if !d.byte(']') {
				for {
					start := d.i + 1
					s, ok := d.str()
					if !ok {
						return false
					}
					if text == "" {
						text = string(data)
					}
					nums = append(nums, text[start:start+len(s)])
					d.space()
					if d.byte(']') {
						break
					}
					if !d.byte(',') {
						return false
					}
					d.space()
				}
			}
			req.numbers, req.fastNumbers = nums, true
			return true
		case "include_enhanced_lrn":
			v, ok := d.bool()
			req.IncludeEnhancedLRN = v
			return ok
		case "messaging_lookup":
			v, ok := d.bool()
			req.MessagingLookup = v
			return ok
		}
		return false
	})
	if !ok {
		*req = bulkRequest{numbers: req.numbers[:0]}
	}
	return ok
}
