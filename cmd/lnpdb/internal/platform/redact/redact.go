// Package redact hides the secrets of the connection strings lnpdb serve
// and the account commands are given (the accounts store's and the update
// log's PostgreSQL DSN, the Redis URL), in what they print: [DSN] for the
// string itself, [Err] for an error that may quote it. It is the one place
// that knows where a connection string keeps its password, so that no
// message anywhere prints one, however malformed the string.
package redact

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// hidden is what stands for a password.
const hidden = "xxxxx"

// secretParams are the query parameters (of a URL) and keywords (of a
// PostgreSQL keyword/value DSN) that hold a secret.
var secretParams = regexp.MustCompile(`(?i)^(password|sslpassword|pass|token|secret)$`)

// keywordSecret is a secret in a keyword/value DSN: password=… or
// password='…'.
var keywordSecret = regexp.MustCompile(`(?i)\b(password|sslpassword)(\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// DSN returns s with its password (and any query parameter or keyword
// that holds a secret) replaced by xxxxx. A URL that does not parse keeps
// its scheme and what follows its last @ without the query: where its
// user information ends cannot be trusted, so none of it is shown; nor is
// it of a URL that parses with an @ outside its user information (a
// password holding # or ?).
func DSN(s string) string {
	scheme, rest, isURL := strings.Cut(s, "://")
	if !isURL {
		return keywordSecret.ReplaceAllString(s, "${1}${2}"+hidden)
	}
	u, err := url.Parse(s)
	if err != nil || (u.User == nil && strings.Contains(rest, "@")) {
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			rest = hidden + rest[at:]
		}
		if q := strings.IndexByte(rest, '?'); q >= 0 {
			rest = rest[:q] + "?…"
		}
		return scheme + "://" + rest
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), hidden)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if secretParams.MatchString(k) {
				q.Set(k, hidden)
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Err returns err with every copy of s, and of its user information, in
// its message replaced as [DSN] replaces them: the error of a parser
// quotes the string it failed on (net/url's does). It unwraps to err.
func Err(err error, s string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := DSN(s)
	for _, form := range []string{s, strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)} {
		msg = strings.ReplaceAll(msg, form, red)
	}
	for _, pw := range passwords(s) {
		msg = strings.ReplaceAll(msg, pw, hidden)
	}
	if msg == err.Error() {
		return err
	}
	return &redacted{msg: msg, err: err}
}

// passwords are the passwords s holds, as far as they can be told: of a
// URL, what lies between the first : and the last @ of its authority
// (however malformed), its pieces of four characters or more between / ?
// and #, and its secret query parameters; of a keyword/value DSN, the password keywords'
// values.
func passwords(s string) []string {
	var out []string
	if _, rest, ok := strings.Cut(s, "://"); ok {
		if at := strings.LastIndexByte(rest, '@'); at > 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
				out = append(out, pw)
				// A parser that stopped at a / ? or # within the
				// password quotes a piece of it (as a port).
				for _, piece := range strings.FieldsFunc(pw, func(r rune) bool { return strings.ContainsRune("/?#", r) }) {
					if len(piece) >= 4 && piece != pw {
						out = append(out, piece)
					}
				}
			}
		}
		if u, err := url.Parse(s); err == nil {
			for k, vs := range u.Query() {
				if secretParams.MatchString(k) {
					out = append(out, slices.DeleteFunc(vs, func(v string) bool { return v == "" })...)
				}
			}
		}
		return out
	}
	for _, m := range keywordSecret.FindAllStringSubmatch(s, -1) {
		if v := strings.Trim(m[3], "'"); v != "" {
			out = append(out, v)
		}
	}
	return out
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }
