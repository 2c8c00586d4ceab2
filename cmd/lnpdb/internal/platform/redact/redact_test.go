package redact

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:s3cret@db.example:5432/lnpdb?sslmode=require": "postgres://u:xxxxx@db.example:5432/lnpdb?sslmode=require",
		"postgres://u@db/lnpdb":                      "postgres://u@db/lnpdb",
		"postgres://db/lnpdb?user=u&password=s3cret": "postgres://db/lnpdb?password=xxxxx&user=u",
		"redis://:s3cret@cache:6379/0":               "redis://:xxxxx@cache:6379/0",
		"bolt:///var/lib/lnpdb/accounts.db":          "bolt:///var/lib/lnpdb/accounts.db",
		// Malformed: the port does not parse, or the password holds
		// what ends an authority.
		"postgres://u:s3cret@db:port/lnpdb":       "postgres://xxxxx@db:port/lnpdb",
		"postgres://u:s3/cr@t@db:5432/x?a=b#c":    "postgres://xxxxx@db:5432/x?…",
		"redis://u:s3cret@cache:bad/0":            "redis://xxxxx@cache:bad/0",
		"host=db user=u password=s3cret dbname=x": "host=db user=u password=xxxxx dbname=x",
		"host=db password = 'a b\\' c' dbname=x":  "host=db password = xxxxx dbname=x",
	} {
		assert.Equal(t, want, DSN(in), in)
	}
}

// TestErr: the error net/url makes of a malformed URL quotes it whole;
// Err leaves neither the URL nor its password in the message, and the
// error still unwraps to the original.
func TestErr(t *testing.T) {
	for _, dsn := range []string{"postgres://u:s3cret@db:port/lnpdb", "redis://u:s3cret@cache:bad/0", "postgres://u:s3\"cret@db:port/x"} {
		_, perr := url.Parse(dsn)
		assert.Error(t, perr)
		err := Err(fmt.Errorf("accounts: %w", perr), dsn)
		assert.NotContains(t, err.Error(), "s3")
		assert.Contains(t, err.Error(), "xxxxx")
		var ue *url.Error
		assert.True(t, errors.As(err, &ue))
	}
	plain := errors.New("connection refused")
	assert.Same(t, plain, Err(plain, "postgres://u:s3cret@db/x"))
	assert.NoError(t, Err(nil, "x"))
}

// FuzzDSN: a password of six or more characters that the rest of the
// string does not hold is in neither DSN's answer nor Err's message, however
// the string around it is malformed.
func FuzzDSN(f *testing.F) {
	f.Add("postgres", "u", "s3cret", "db:5432/lnpdb")
	f.Add("postgres", "u", "s3/cr@t", "db:port/lnpdb?x=1")
	f.Add("redis", "", "pa ss\"w", "cache:bad/0")
	f.Add("postgres", "u%zz", "s3cret%", "[::1/x")
	f.Fuzz(func(t *testing.T, scheme, user, pw, rest string) {
		if len(pw) < 6 || strings.ContainsAny(scheme+user, ":@/?#") || strings.Contains(scheme+"://"+user+":", pw) || strings.Contains(rest, pw) ||
			strings.Contains(pw, "xxxxx") || strings.Contains(rest, "@") || strings.ContainsRune(user+pw, ':') {
			t.Skip()
		}
		s := scheme + "://" + user + ":" + pw + "@" + rest
		assert.NotContains(t, DSN(s), pw, s)
		_, err := url.Parse(s)
		if err != nil {
			assert.NotContains(t, Err(err, s).Error(), pw, s)
		}
	})
}
