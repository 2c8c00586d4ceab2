// Package nanp parses and validates North American Numbering Plan (NANP)
// telephone numbers, and reads and writes the RFC 4694 number-portability
// parameters of tel URIs and SIP user parts.
//
// Parsing sits on the hot path of every lookup, so it is exact, runs in one
// pass over the input and allocates nothing, whether the input is accepted or
// not. Every error matches [ErrInvalid] (which is lnpdb.ErrInvalidNumber)
// with errors.Is and says what is wrong: a malformed input gets a short
// reason, a number that breaks a NANP rule a [*RuleError] naming the code
// and the rule (see [Rule]). Every error is built once, at start, so that
// rejecting an input allocates nothing.
//
// # Accepted forms
//
// [Parse] and [ParseBytes] accept, for the number 202-555-0123:
//
//	12025550123           11 digits starting with 1 (the canonical form)
//	+12025550123          + and country code 1, then 10 digits
//	2025550123            10 digits
//	+1 (202) 555-0123     any of the above with punctuation:
//	1-202-555-0123        spaces, '-', '.', '(' and ')'
//	202.555.0123
//	tel:+1-202-555-0123;npdi;rn=+12025550000
//
// A tel URI is recognised by its "tel:" prefix (in any case); the prefix and
// everything from the first ';' are dropped before the rest is parsed by the
// rules above. Use [ParseTelURI] to read the parameters too.
//
// Punctuation may go almost anywhere, with these limits, which reject inputs
// that no person or switch writes and that are more likely garbage:
//
//   - spaces are free, but no other whitespace;
//   - '+' must come first (after optional spaces) and be followed directly by
//     the country code 1, and then by exactly 10 more digits;
//   - '-' and '.' must follow a digit or ')' (possibly with spaces between),
//     so none leads, none trails and none doubles up;
//   - at most one pair of parentheses, and it must hold exactly the area code
//     (NPA), as in "(202) 555-0123" or "1 (202) 555-0123".
//
// Anything else is rejected: letters, any other ASCII character, any
// non-ASCII byte (including Unicode digits such as "２"), a NUL byte, 9 or 12
// digits, 11 digits not starting with 1, and any input longer than 64 bytes.
//
// # NANP rules
//
// The 10-digit national number is NPA-NXX-XXXX: area code, central office
// (exchange) code, line number. A number is valid when
//
//   - the NPA is [2-9]XX and not of the form N11 (service codes such as 411)
//     or N9X (reserved for expansion);
//   - the NXX is [2-9]XX and not of the form N11.
//
// [CheckNPA] and [CheckNXX] state these rules for a code on its own, as
// the source files give NPA and NXX in columns of their own.
//
// A leading 1 on a 10-digit-looking input therefore fails: "1202555012"
// would leave NPA 120. It is reported as a wrong length (country code 1 and
// a digit short), the likelier mistake, not as a bad NPA.
//
// # Data files
//
// [ParseDigits] is the strict form for machine-written data: exactly 10
// digits, or 11 starting with 1, with no punctuation, and NANP-valid.
package nanp
