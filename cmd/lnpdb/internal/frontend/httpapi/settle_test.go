package httpapi

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
)

// settled waits for acct to have settled n payments.
func settled(t *testing.T, acct *accounts, n int) (settledN, delivered int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		acct.mu.Lock()
		s, d := acct.settled, acct.delivered
		acct.mu.Unlock()
		if s >= n || time.Now().After(deadline) {
			return s, d
		}
	}
}

// TestPaymentSettledOnDelivery: a billed answer goes out whole, with its
// Content-Length, and each lookup's payment is settled as delivered once
// it has; a bulk or GraphQL request settles each of its lookups.
func TestPaymentSettledOnDelivery(t *testing.T) {
	acct := &accounts{credit: 100}
	s := newServer(t, func(c *Config) { c.Accounts = acct })
	r := s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123"}`)
	require.Equal(t, http.StatusOK, r.StatusCode)
	assert.Equal(t, strconv.Itoa(len(r.body)), r.Header.Get("Content-Length"), "a billed answer goes out whole, with its Content-Length")
	n, d := settled(t, acct, 1)
	assert.Equal(t, 1, n)
	assert.Equal(t, 1, d)

	_, g := s.gql(t, `{ a: lookupLrn(phoneNumber: "12025550123") { lrn } b: lookupCnam(phoneNumber: "12025550123") { cnam } }`, nil)
	require.Empty(t, g.Errors)
	n, d = settled(t, acct, 3)
	assert.Equal(t, 3, n)
	assert.Equal(t, 3, d)
	assert.Equal(t, 97, acct.credit)
}

// leaving is an Accounts whose Charge returns only once the client has
// left (the request's context is done): its answer cannot be delivered.
type leaving struct {
	accounts
	charging chan struct{}
	once     sync.Once
}

func (l *leaving) Charge(ctx context.Context, k auth.Key, kind string) (Payment, error) {
	l.once.Do(func() { close(l.charging) })
	<-ctx.Done()
	return l.accounts.Charge(ctx, k, kind)
}

// TestPaymentNotSettledWhenClientLeft: a lookup paid for after its client
// closed the connection is given back: the answer was not delivered.
func TestPaymentNotSettledWhenClientLeft(t *testing.T) {
	acct := &leaving{accounts: accounts{credit: 100}, charging: make(chan struct{})}
	s := newServer(t, func(c *Config) { c.Accounts = acct })
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	require.NoError(t, err)
	body := `{"phone_number":"12025550123"}`
	_, err = conn.Write([]byte("POST /api/v1/lrn HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer " + testKey +
		"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
	require.NoError(t, err)
	select {
	case <-acct.charging:
	case <-time.After(5 * time.Second):
		t.Fatal("the lookup was not charged")
	}
	conn.Close()
	n, d := settled(t, &acct.accounts, 1)
	assert.Equal(t, 1, n, "the payment is settled")
	assert.Equal(t, 0, d, "as not delivered")
	acct.mu.Lock()
	defer acct.mu.Unlock()
	assert.Equal(t, 100, acct.credit, "and given back")
}
