package jobsapi

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
)

// checkNumbers holds what a job keeps of any upload: at most
// billing.MaxJobNumbers numbers, none longer than maxNumberLen or holding a
// line end (the store keeps them one a line).
func checkNumbers(t *testing.T, nums []string) {
	t.Helper()
	if len(nums) > billing.MaxJobNumbers {
		t.Fatalf("%d numbers", len(nums))
	}
	for _, n := range nums {
		if len(n) > maxNumberLen || strings.ContainsAny(n, "\r\n") {
			t.Fatalf("kept %q", n)
		}
	}
}

func FuzzParseCSV(f *testing.F) {
	for _, s := range []string{"12015550123\n", "phone_number\n12015550123\r\n", "name,phone_number\na,\"+1 201 555 0123\"\n", "\ufeff1\n\n2", ",,,\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		nums, err := ParseCSV(bytes.NewReader(in))
		var bad *uploadError
		if err != nil && !errors.As(err, &bad) && !errors.Is(err, errTooMany) {
			t.Fatalf("error of another kind: %v", err)
		}
		if err == nil && len(nums) == 0 {
			t.Fatal("no numbers and no error")
		}
		checkNumbers(t, nums)
	})
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"phone_numbers":["12015550123"]}`, `{"phone_numbers":["1"],"kind":"cnam","include_enhanced_lrn":null,"x":{"y":[1]}}`,
		`{"phone_numbers":[1]}`, `{"phone_numbers":["a\nb"],"webhook_url":"https://e.com"}`, `[]`, `{"phone_numbers":["1"]} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		u, err := ParseJSON(bytes.NewReader(in))
		var bad *uploadError
		switch {
		case err != nil && !errors.As(err, &bad) && !errors.Is(err, errTooMany):
			t.Fatalf("error of another kind: %v", err)
		case err != nil:
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error text %q", err)
			}
		case len(u.Numbers) == 0:
			t.Fatal("no numbers and no error")
		default:
			checkNumbers(t, u.Numbers)
		}
	})
}
