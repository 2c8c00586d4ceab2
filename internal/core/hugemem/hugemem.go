// Package hugemem owns the one way the project reserves anonymous memory
// for transparent huge pages: a private mapping with a 2 MiB boundary
// inside it, so that a caller can advise MADV_HUGEPAGE on aligned memory
// before its first touch. The table's huge-page copy (format) and the
// memory floor's chain (memfloor) use it. It is Linux only.
package hugemem

// PageSize is the transparent huge page size the reservation aligns to.
const PageSize = 2 << 20
