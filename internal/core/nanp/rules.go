package nanp

import (
	"errors"
	"fmt"
)

// RuleError is a number of the right shape whose area code (NPA) or
// exchange code (NXX) breaks a NANP rule (docs/CONTRACT.md §1). It matches
// [ErrInvalid] with errors.Is. The errors are built once per code, so that
// returning one allocates nothing.
type RuleError struct {
	// Part is "NPA" or "NXX".
	Part string
	// Code is the offending three-digit code, 0 to 999.
	Code int
	// Rule says which rule the code breaks, naming the code, e.g. "NPA 911
	// is an N11 code, which is not a geographic area code".
	Rule string

	msg string
}

func (e *RuleError) Error() string { return e.msg }

// Unwrap returns [ErrInvalid].
func (e *RuleError) Unwrap() error { return ErrInvalid }

// The rule errors of every code that breaks one; nil for a good code.
var npaRules, nxxRules = func() (npa, nxx [1000]*RuleError) {
	for c := range 1000 {
		npa[c] = newRuleError("NPA", c, npaRule(c))
		nxx[c] = newRuleError("NXX", c, nxxRule(c))
	}
	return npa, nxx
}()

func newRuleError(part string, code int, rule string) *RuleError {
	if rule == "" {
		return nil
	}
	rule = fmt.Sprintf("%s %03d %s", part, code, rule)
	return &RuleError{Part: part, Code: code, Rule: rule, msg: ErrInvalid.Error() + ": " + rule}
}

// npaRule and nxxRule say, after "NPA 123 ", why a code is no area or
// exchange code; "" means it is one. They are the one statement of the
// rules: Valid, CheckNPA and CheckNXX all come from them.
func npaRule(a int) string {
	switch {
	case a < 200:
		return fmt.Sprintf("starts with %d, but an area code starts with 2-9", a/100)
	case a%100 == 11:
		return "is an N11 code, which is not a geographic area code"
	case a/10%10 == 9:
		return "is an N9X code, reserved for expanding the numbering plan, not a geographic area code"
	}
	return ""
}

func nxxRule(x int) string {
	switch {
	case x < 200:
		return fmt.Sprintf("starts with %d, but an exchange code starts with 2-9", x/100)
	case x%100 == 11:
		return "is an N11 code, which is reserved for service codes such as 411 and 911 and never assigned as an exchange code"
	}
	return ""
}

// CheckNPA returns nil if a, which must be 0 to 999, is a valid area code
// ([2-9]XX, neither N11 nor N9X), else a *RuleError saying which rule it
// breaks.
func CheckNPA(a int) error {
	if e := npaRules[a%1000]; e != nil {
		return e
	}
	return nil
}

// CheckNXX returns nil if x, which must be 0 to 999, is a valid exchange
// code ([2-9]XX, not N11), else a *RuleError saying which rule it breaks.
func CheckNXX(x int) error {
	if e := nxxRules[x%1000]; e != nil {
		return e
	}
	return nil
}

// ValidNPA reports whether a is a valid area code; see [CheckNPA].
func ValidNPA(a int) bool { return 0 <= a && a < 1000 && npaRules[a] == nil }

// ValidNXX reports whether x is a valid exchange code; see [CheckNXX].
func ValidNXX(x int) bool { return 0 <= x && x < 1000 && nxxRules[x] == nil }

// Rule returns the rule an invalid number breaks, as a sentence naming the
// code (see [RuleError]), and true; or "" and false when err is not about
// a NANP rule (a malformed number, a wrong length, or nil).
func Rule(err error) (string, bool) {
	// A type switch first: errors.As costs an allocation, and invalid
	// numbers arrive at the rate of good ones.
	if e, ok := err.(*RuleError); ok {
		return e.Rule, true
	}
	var e *RuleError
	if errors.As(err, &e) {
		return e.Rule, true
	}
	return "", false
}
