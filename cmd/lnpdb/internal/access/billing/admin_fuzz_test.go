package billing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAdminCredit: whatever the body of a top-up, the answer is a
// documented status, never a 5xx, and the balance moves only with a 201,
// by exactly the amount credited.
func FuzzAdminCredit(f *testing.F) {
	for _, s := range []string{`{"amount":"25.00","ref":"A"}`, `{"amount":25,"ref":"B"}`, `{"amount":"-1","ref":"C"}`,
		`{"amount":1e2,"ref":"D"}`, `{"amount":"0.0000001","ref":"E"}`, `{"amount":null,"ref":"F"}`, `[]`, `{"ref":""}`, `{`, ``} {
		f.Add(s)
	}
	s := newBolt(f)
	acc := mustAccount(f, s, 0)
	a, err := NewAdmin(AdminConfig{Store: s, Authorize: func(string) (string, bool) { return "adm1", true }, NewKey: func() (string, [32]byte) { return "", hash("") }})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, body string) {
		before, err := s.Account(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("POST", "/admin/v1/accounts/"+acc.ID+"/credits", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer x")
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		a.ServeHTTP(w, req)
		after, err := s.Account(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch w.Code {
		case http.StatusCreated:
			if after.Balance <= before.Balance {
				t.Fatalf("201 without credit: %s", w.Body)
			}
		case http.StatusOK, http.StatusBadRequest, http.StatusConflict:
			if after.Balance != before.Balance {
				t.Fatalf("%d changed the balance %d → %d: %s", w.Code, before.Balance, after.Balance, body)
			}
		default:
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
		}
	})
}
