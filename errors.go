package lnpdb

import (
	"errors"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// Sentinel errors shared by every lookup package. Match them with errors.Is.
var (
	// ErrInvalidNumber reports an input that is not a valid NANP number
	// (CONTRACT §1): wrong length, a non-digit, an NPA or NXX out of range.
	// The lookup packages return errors that match it with errors.Is and
	// say what is wrong, such as "lnpdb: invalid phone number: NPA 911 is
	// an N11 code, which is not a geographic area code".
	ErrInvalidNumber = nanp.ErrInvalid

	// ErrNotFound reports a valid number whose NPA-NXX code is not assigned
	// (vacant): there is nowhere to route it.
	ErrNotFound = errors.New("lnpdb: number not found")

	// ErrClosed reports a lookup on a table that has been closed.
	ErrClosed = errors.New("lnpdb: table is closed")
)
