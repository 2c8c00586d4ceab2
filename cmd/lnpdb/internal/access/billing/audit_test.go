package billing

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var admin = Actor{Key: "1a2b3c4d", Remote: "192.0.2.7:40000", Via: "console", At: t0}

// TestAudit: every change made with an actor is recorded with it, in the
// order made; a change without one (the lnpdb commands) or one that fails
// records nothing.
func TestAudit(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		actx := WithActor(ctx, admin)
		quiet, err := s.CreateAccount(ctx, "unaudited", t0)
		require.NoError(t, err)
		_, _, err = s.Credit(ctx, quiet.ID, 1_000_000, "CLI-1", t0)
		require.NoError(t, err)

		a, err := s.CreateAccount(actx, "Acme <b>", t0)
		require.NoError(t, err)
		k, err := s.AddKey(actx, KeyRecord{AccountID: a.ID, Label: "prod", Hash: hash("k1"), Limit: 60}, t0)
		require.NoError(t, err)
		_, _, err = s.Credit(actx, a.ID, 25_000_000, "INV-1", t0)
		require.NoError(t, err)
		_, _, err = s.Credit(actx, a.ID, 25_000_000, "INV-1", t0) // replayed: nothing changes
		require.NoError(t, err)
		require.NoError(t, s.SetPrice(actx, a.ID, KindCNAM, 2500))
		require.NoError(t, s.SetPrice(actx, "", KindLRN, 900))
		_, err = s.SetStatus(actx, a.ID, StatusSuspended)
		require.NoError(t, err)
		_, err = s.SetStatus(actx, a.ID, StatusActive)
		require.NoError(t, err)
		_, err = s.RevokeKey(actx, a.ID, k.ID, t0)
		require.NoError(t, err)

		// Failures: nothing recorded.
		_, _, err = s.Credit(actx, a.ID, 1, "INV-1", t0)
		require.ErrorIs(t, err, ErrConflict)
		_, err = s.SetStatus(actx, "acct_nope", StatusSuspended)
		require.ErrorIs(t, err, ErrNotFound)
		_, err = s.RevokeKey(actx, a.ID, "key_nope", t0)
		require.ErrorIs(t, err, ErrNotFound)
		require.ErrorIs(t, s.SetPrice(actx, "acct_nope", KindLRN, 1), ErrNotFound)

		all, err := s.Audit(ctx, "", 0, 0)
		require.NoError(t, err)
		type row struct{ action, account, detail string }
		var got []row
		for _, e := range all {
			assert.Equal(t, admin.Key, e.Key)
			assert.Equal(t, admin.Remote, e.Remote)
			assert.Equal(t, "console", e.Via)
			assert.True(t, e.At.Equal(t0), "%v", e.At)
			got = append(got, row{e.Action, e.Account, e.Detail})
		}
		assert.Equal(t, []row{ // newest first
			{AuditRevoke, a.ID, k.ID},
			{AuditActivate, a.ID, "active"},
			{AuditSuspend, a.ID, "suspended"},
			{AuditPrice, "", "lrn $0.0009"},
			{AuditPrice, a.ID, "cnam $0.0025"},
			{AuditCredit, a.ID, `$25.00 ref "INV-1": credited before, nothing changed`},
			{AuditCredit, a.ID, `$25.00 ref "INV-1"`},
			{AuditNewKey, a.ID, k.ID + ` label "prod" rate limit 60`},
			{AuditCreate, a.ID, `name "Acme <b>"`},
		}, got)
		for i := 1; i < len(all); i++ {
			assert.Less(t, all[i].ID, all[i-1].ID)
		}

		// One account's, paged by id.
		mine, err := s.Audit(ctx, a.ID, 0, 3)
		require.NoError(t, err)
		require.Len(t, mine, 3)
		assert.Equal(t, all[0], mine[0])
		next, err := s.Audit(ctx, a.ID, mine[2].ID, 0)
		require.NoError(t, err)
		assert.Equal(t, all[4:], next, "the rest but the default price's")
		none, err := s.Audit(ctx, quiet.ID, 0, 0)
		require.NoError(t, err)
		assert.Empty(t, none)
		past, err := s.Audit(ctx, "", all[0].ID+100, 2)
		require.NoError(t, err)
		assert.Equal(t, all[:2], past)
		first, err := s.Audit(ctx, "", all[len(all)-1].ID, 0)
		require.NoError(t, err)
		assert.Empty(t, first)
	})
}

// TestAuditInTheChangesTransaction: when the audit entry cannot be written,
// the change it records is not made either (PostgreSQL, where a trigger can
// refuse the entry; bbolt writes both in one Update by construction).
func TestAuditInTheChangesTransaction(t *testing.T) {
	s := newPostgres(t).(*PostgresStore)
	ctx := context.Background()
	a := mustAccount(t, s, 0)
	_, err := s.pool.Exec(ctx, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse()`)
	require.NoError(t, err)
	actx := WithActor(ctx, admin)
	_, _, err = s.Credit(actx, a.ID, 5_000_000, "INV-9", t0)
	require.ErrorContains(t, err, "audit refused")
	_, err = s.SetStatus(actx, a.ID, StatusSuspended)
	require.Error(t, err)
	require.Error(t, s.SetPrice(actx, a.ID, KindLRN, 1))
	k, err := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Hash: hash("k")}, t0)
	require.NoError(t, err)
	_, err = s.RevokeKey(actx, a.ID, k.ID, t0.Add(time.Hour))
	require.Error(t, err)
	_, err = s.AddKey(actx, KeyRecord{AccountID: a.ID, Hash: hash("k2")}, t0)
	require.Error(t, err)
	_, err = s.CreateAccount(actx, "B", t0)
	require.Error(t, err)

	got, err := s.Account(ctx, a.ID)
	require.NoError(t, err)
	assert.Zero(t, got.Balance, "credited without its audit entry")
	assert.Equal(t, StatusActive, got.Status, "suspended without its audit entry")
	p, err := s.Prices(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, DefaultPrices[KindLRN], p[KindLRN])
	keys, err := s.Keys(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, keys, 1)
	assert.True(t, keys[0].Revoked.IsZero(), "revoked without its audit entry")
	accts, err := s.Accounts(ctx)
	require.NoError(t, err)
	assert.Len(t, accts, 1, "created without its audit entry")
}

// TestAdminAPIAudits: the admin API's changes are audited as the admin
// key's, from the client's address; its reads are not.
func TestAdminAPIAudits(t *testing.T) {
	s := newBolt(t)
	a, err := NewAdmin(AdminConfig{Store: s, Authorize: func(tok string) (string, bool) { return "adm1", tok == "admin-secret" },
		Now: func() time.Time { return t0 }, NewKey: func() (string, [32]byte) { return "lnp_x", hash("lnp_x") }})
	require.NoError(t, err)
	c := serveAdmin(t, a)
	_, acc, _ := c.do("POST", "/admin/v1/accounts", `{"name":"Acme"}`)
	id := acc["id"].(string)
	code, _, body := c.do("POST", "/admin/v1/accounts/"+id+"/credits", `{"amount":"10.00","ref":"WIRE-7"}`)
	require.Equal(t, 201, code, body)
	c.do("GET", "/admin/v1/accounts/"+id, "")
	c.do("POST", "/admin/v1/accounts/"+id+"/suspend", "")
	code, _, _ = c.doKey("wrong", "POST", "/admin/v1/accounts/"+id+"/activate", "")
	require.Equal(t, 401, code)

	log, err := s.Audit(context.Background(), id, 0, 0)
	require.NoError(t, err)
	require.Len(t, log, 3)
	assert.Equal(t, []string{AuditSuspend, AuditCredit, AuditCreate}, []string{log[0].Action, log[1].Action, log[2].Action})
	assert.Equal(t, `$10.00 ref "WIRE-7"`, log[1].Detail)
	for _, e := range log {
		assert.Equal(t, "adm1", e.Key)
		assert.Equal(t, "api", e.Via)
		assert.Regexp(t, `^127\.0\.0\.1:\d+$`, e.Remote)
		assert.True(t, e.At.Equal(t0))
	}
}
