// Package jsonbody owns the style of every JSON body the server's HTTP APIs
// write, the lookup API's and the admin APIs' alike: encoding/json's
// encoding, compact, one value per line, without HTML escaping (the bodies
// are application/json, never HTML: "<API_KEY>" and "AT&T" read as they
// are). Standard library only.
package jsonbody

import (
	"encoding/json"
	"io"
)

// NewEncoder returns an encoder writing to w in the servers' one style.
func NewEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
