package httpapi

import (
	"errors"
	"net/http"
	"syscall"
)

// A failure of the disk under the table is the operator's to fix, not a
// bug: it answers 507 or 503 with a code that says so, so that a feed
// client knows to retry later rather than report a server fault.
var (
	errDiskFull = &apiError{http.StatusInsufficientStorage, errorBody{
		"Insufficient storage", CodeInsufficientStorage,
		"The disk holding the table is full or over its quota; the request was not carried out. Retry once space is freed"}}
	errDiskFailed = &apiError{http.StatusServiceUnavailable, errorBody{
		"Storage unavailable", CodeStorageUnavailable,
		"The disk holding the table failed or is read-only; the request was not carried out. Retry once the disk is fixed"}}
)

// storageFailure maps an error from writing the table or its journal to its
// answer: ENOSPC and EDQUOT are 507 INSUFFICIENT_STORAGE, EIO and EROFS 503
// STORAGE_UNAVAILABLE; anything else is 500 INTERNAL_ERROR. The format
// package wraps the OS error with %w, so errors.Is finds it.
func storageFailure(err error) *apiError {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return errDiskFull
	case errors.Is(err, syscall.EIO), errors.Is(err, syscall.EROFS):
		return errDiskFailed
	}
	return errInternal
}
