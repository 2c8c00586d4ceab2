package httpapi

import (
	"sync/atomic"

	"github.com/lnpdb/lnpdb/format"
)

// TableSource gives the handler the table to answer from. DB is called once
// per lookup request and must be safe for concurrent use; it returns nil when
// no table is loaded, which the handler answers with 503 UNAVAILABLE.
type TableSource interface {
	DB() *format.DB
}

// Table is a TableSource holding one swappable table. The zero Table holds
// none.
type Table struct {
	p atomic.Pointer[format.DB]
}

// NewTable returns a Table holding db.
func NewTable(db *format.DB) *Table {
	t := new(Table)
	t.p.Store(db)
	return t
}

// DB returns the current table, or nil.
func (t *Table) DB() *format.DB { return t.p.Load() }

// Swap installs db as the current table and returns the previous one, which
// the caller closes once it is done with it (a lookup still running on a
// closed table answers 503 UNAVAILABLE, never a wrong answer).
func (t *Table) Swap(db *format.DB) *format.DB { return t.p.Swap(db) }
