package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
)

// priced is an Accounts that refuses with details and reports usage.
type priced struct {
	accounts
	usageErr error
}

type shortError struct{ price, balance string }

func (e shortError) Error() string { return "short" }
func (e shortError) Details() string {
	return fmt.Sprintf("price %s, balance %s", e.price, e.balance)
}
func (e shortError) Unwrap() error { return ErrInsufficientBalance }

func (p *priced) Charge(ctx context.Context, k auth.Key, kind string) (Payment, error) {
	p.mu.Lock()
	short := p.credit == 0 && p.fail == nil
	p.mu.Unlock()
	if short {
		return nil, shortError{"0.002", "0.0015"}
	}
	return p.accounts.Charge(ctx, k, kind)
}

func (p *priced) Usage(_ context.Context, k auth.Key) (any, error) {
	if p.usageErr != nil {
		return nil, p.usageErr
	}
	return map[string]any{"key": k.ID(), "charged": len(p.kinds)}, nil
}

// TestChargeKinds: an LRN lookup is charged as what it asked for;
// unanswered lookups are not charged.
func TestChargeKinds(t *testing.T) {
	acct := &priced{accounts: accounts{credit: 100}}
	s := newServer(t, func(c *Config) { c.Accounts = acct })
	for _, body := range []string{
		`{"phone_number":"12025550123"}`,
		`{"phone_number":"12025550123","include_enhanced_lrn":true}`,
		`{"phone_number":"12025550123","messaging_lookup":true}`,
		`{"phone_number":"12025550123","include_enhanced_lrn":true,"messaging_lookup":true}`,
		`{"phone_number":"1"}`,
		`{"phone_number":12}`,
	} {
		s.post(t, "/api/v1/lrn", body)
	}
	s.gql(t, `{ a: lookupLrn(phoneNumber: "12025550123", includeEnhancedLrn: true) { lrn } b: lookupTrust(phoneNumber: "12025550123") { trustScore } c: lookupCnam(phoneNumber: "1") { cnam } }`, nil)
	assert.ElementsMatch(t, []string{ChargeLRN, ChargeLRNEnhanced, ChargeLRNMessaging, ChargeLRNEnhancedMessaging, ChargeLRNEnhanced, "trust"}, acct.kinds)
}

// TestGraphQLCarrierIsEnhanced: the GraphQL simple form's carrier comes
// from the enhanced data, so a lookup selecting it is charged as an
// enhanced lookup, as REST charges include_enhanced_lrn; one without it
// is a plain LRN lookup. The same holds for the bulk form and for a
// document answered without gqlgen (asked twice: the second is planned).
func TestGraphQLCarrierIsEnhanced(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{`{ lookupLrn(phoneNumber: "12025550123") { lrn carrier } }`, []string{ChargeLRNEnhanced}},
		{`{ lookupLrn(phoneNumber: "12025550123") { lrn } }`, []string{ChargeLRN}},
		{`{ lookupLrn(phoneNumber: "12025550123", includeMessaging: true) { carrier messaging { provider } } }`, []string{ChargeLRNEnhancedMessaging}},
		{`{ lookupLrnBulk(phoneNumbers: ["12025550123", "12025550123"]) { carrier } }`, []string{ChargeLRNEnhanced, ChargeLRNEnhanced}},
		{`{ lookupLrnBulk(phoneNumbers: ["12025550123"]) { lrn } }`, []string{ChargeLRN}},
	} {
		acct := &priced{accounts: accounts{credit: 100}}
		s := newServer(t, func(c *Config) { c.Accounts = acct })
		for range 2 {
			_, g := s.gql(t, tc.query, nil)
			require.Empty(t, g.Errors, tc.query)
		}
		assert.Equal(t, append(tc.want, tc.want...), acct.kinds, tc.query)
	}
}

func TestPaymentRequiredDetails(t *testing.T) {
	acct := &priced{}
	s := newServer(t, func(c *Config) { c.Accounts = acct })
	r := s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123","include_enhanced_lrn":true}`)
	require.Equal(t, http.StatusPaymentRequired, r.StatusCode)
	var body errorBody
	require.NoError(t, json.Unmarshal(r.body, &body))
	assert.Equal(t, errorBody{"Insufficient balance", CodeInsufficientBalance, "price 0.002, balance 0.0015"}, body)

	r, _ = s.gql(t, `{ ok: lookupLrn(phoneNumber: "1") { success } paid: lookupLrn(phoneNumber: "12025550123") { lrn success error } }`, nil)
	require.Equal(t, http.StatusOK, r.StatusCode)
	var g struct {
		Data   map[string]json.RawMessage
		Errors []struct {
			Message    string
			Extensions map[string]string
		}
	}
	require.NoError(t, json.Unmarshal(r.body, &g))
	assert.JSONEq(t, `{"lrn":null,"success":false,"error":"Insufficient balance"}`, string(g.Data["paid"]))
	require.Len(t, g.Errors, 1, "only the unpaid lookup is reported: %s", r.body)
	assert.Equal(t, map[string]string{"code": CodeInsufficientBalance, "details": "price 0.002, balance 0.0015"}, g.Errors[0].Extensions)
}

func TestUsageEndpoint(t *testing.T) {
	acct := &priced{accounts: accounts{credit: 5}}
	s := newServer(t, func(c *Config) { c.Accounts = acct })
	s.post(t, "/api/v1/cnam", `{"phone_number":"12025550123"}`)
	r := s.do(t, http.MethodGet, "/api/v1/usage", "", "Authorization", "Bearer "+testKey)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.JSONEq(t, fmt.Sprintf(`{"key":%q,"charged":1}`, auth.HashKey(testKey).ID()), string(r.body))
	assert.NotEmpty(t, r.Header.Get("X-Ratelimit-Remaining"), "usage counts against the key's limit")
	assert.Equal(t, http.StatusUnauthorized, s.do(t, http.MethodGet, "/api/v1/usage", "").StatusCode)
	assert.Equal(t, http.StatusMethodNotAllowed, s.do(t, http.MethodPost, "/api/v1/usage", "", "Authorization", "Bearer "+testKey).StatusCode)
	acct.usageErr = fmt.Errorf("store down")
	errCase{"", "GET", "/api/v1/usage", []string{"Authorization", "Bearer " + testKey}, "", 503, CodeUnavailable}.check(t, s)

	// Without accounts there is no such endpoint.
	plain := newServer(t)
	errCase{"", "GET", "/api/v1/usage", []string{"Authorization", "Bearer " + testKey}, "", 404, CodeNotFound}.check(t, plain)
}
