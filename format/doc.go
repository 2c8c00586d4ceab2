// Package format is the lnpdb table file: its byte layout, the Writer that
// writes it, Open that maps it, live updates and compaction, and the raw
// per-number and per-block records that the lookup packages turn into
// answers. Reading a source directory into a Writer is package
// format/build's.
//
// # Basic usage
//
//	report, err := build.Build(ctx, os.DirFS("src"), "us.lnpdb", build.Options{})
//	db, err := format.Open("us.lnpdb")
//	defer db.Close()
//	rec, err := db.Get(2025550123, format.FieldPorted)
//	if rec.Ported.OK { fmt.Println(rec.Ported.LRN) }
//
// Most callers want the lookup packages (lrn, cnam, messaging, trust), which
// apply the routing rules to these records.
//
// # Concurrency and lifetime
//
// A DB is safe for concurrent use. Close, Reload and Compact may run while
// lookups are in flight: each lookup holds a reference on the mapping it
// started with, and the last reference dropped on a mapping the DB has moved
// away from unmaps it — at once, not when the garbage collector gets to it.
// Strings in
// records are ordinary Go strings decoded at Open; they stay valid after
// Close. A table file must never be written in place while mapped (the
// process would die of SIGBUS); replace it by renaming a new file over it,
// which is what WriteFile does.
//
// # Performance
//
// Open reads the header, the directory and the small dictionaries; its cost
// does not depend on how many numbers the table holds. A lookup of a ported
// number costs one hash, one read of a pilot byte and one read of a record —
// two dependent memory accesses — plus a read of the block data, and
// allocates nothing. GetMany overlaps the memory accesses of many numbers.
//
// # File layout
//
// All integers are little-endian. A file is a header, a section directory and
// the sections.
//
// Header, 64 bytes:
//
//	[0,8)   magic "LNPDB\r\n\x1a"
//	[8,10)  format version, 2
//	[10,12) flags, 0
//	[12,16) number of sections S
//	[16,24) offset of the directory, 64
//	[24,32) size of the whole file in bytes (a truncated file fails here)
//	[32,40) build time, unix seconds
//	[40,56) zero
//	[56,64) xxhash64 (seed 0) of bytes [0,56)
//
// Directory, at 64: S entries of 40 bytes, then the xxhash64 of those S*40
// bytes (8 bytes). An entry:
//
//	[0,8)   section id, ASCII, NUL-padded
//	[8,12)  encoding: 0 raw, 1 zstd (one zstd frame)
//	[12,16) zero
//	[16,24) offset of the section's stored bytes
//	[24,32) length of the stored bytes
//	[32,40) xxhash64 of the stored bytes
//
// Sections start at 8-byte aligned offsets; every file has all of these, in
// this order (a section may be empty):
//
//	META      zstd  JSON object: {"codes": N, "thousands_blocks": N}
//	CARRIERS  zstd  uvarint count, then per carrier the strings OCN, name,
//	                carrier type, default messaging provider, and a byte 0/1
//	                for the default messaging enabled flag. A string is a
//	                uvarint length and that many bytes. Index i is carrier i.
//	RATECTRS  zstd  uvarint count, then per rate center the strings state,
//	                name, LATA, city, county, ZIP, IANA time zone, standard
//	                UTC offset (e.g. "-0500").
//	LRNS      zstd  uvarint count, then the LRNs as 10-digit numbers in
//	                ascending order, each a uvarint difference from the one
//	                before (the first from 0).
//	MSGSTRS   zstd  uvarint count, then the strings (index 0 is "") that
//	                messaging tuples refer to: providers, countries,
//	                country codes, reference ids.
//	PAIRS     zstd  uvarint count, then per pair the uvarints LRN index and
//	                carrier index: the distinct (LRN, SPID) combinations of
//	                ported records. An LRN belongs to one switch, so pairs
//	                are few and one index is narrower than two.
//	MSGTUPLE  zstd  uvarint count, then per tuple uvarint provider, a byte
//	                0/1 enabled, uvarint country, uvarint country code,
//	                uvarint reference id (indexes into MSGSTRS): the
//	                distinct messaging records.
//	BLOCKS    raw   block data, described below.
//	PORTED    raw   per-number section; fields: pair index into PAIRS,
//	                activation time (32 bits, unix seconds, 0 unknown).
//	MSGRECS   raw   per-number section; field: tuple index into MSGTUPLE.
//	CNAM      raw   per-number section; field: name index into CNAMNAME.
//	TRUST     raw   per-number section; fields: spam type (3 bits: NONE,
//	                SPAM, SCAM, ROBOCALL, TELEMARKETER), complaint count,
//	                first reported, last reported (32 bits each, unix
//	                seconds, 0 none).
//	CNAMNAME  raw   the distinct caller names in zstd chunks, below.
//
// A per-number section is partitioned by NPA. It starts with a 32-byte
// header — u64 number of records, then 8 bytes giving the bit width of each
// payload field in order (0 ends the list), then 16 zero bytes — and a
// partition table of 1000 entries of 24 bytes indexed by NPA: u64 offset of
// the partition's hash, u64 offset of its records (both from the section
// start), u32 record count n, u32 zero. An empty partition is all zeros.
//
// A partition's hash is a minimal perfect hash over the numbers' remainders
// within the NPA (NXX*10000 + line, below 10^7): 32-byte header (u64 n, u64
// buckets B, u64 slots M, u64 seed), B pilot bytes, then (M-n) u32 remap
// entries. For a key k: h = xxhash64 of k's 8 little-endian bytes with the
// seed mixed in; bucket and slot are computed from h and the bucket's pilot
// exactly as package internal/mphf documents (Params.Hash, Params.Bucket,
// Params.Slot); a slot s >= n is replaced by remap[s-n]. The record at that
// slot belongs to k only if its stored key equals k: a number that is not in
// the section lands on some other number's record and is rejected there.
//
// Records are n fixed-width records packed as a little-endian bit stream:
// record i occupies bits [i*W, (i+1)*W) where W = 23 + the field widths
// (at most 128). The first 23 bits are the key, stored as the remainder
// less 2,000,000 (an NXX is 200-999, so the remainder is 2,000,000 to
// 9,999,999); the fields follow in order.
// Bit j of the stream is bit j%8 of byte j/8. 17 zero bytes follow the last
// record so that a reader may load 17 bytes at any record start.
//
// BLOCKS stores entries for assigned codes only: a directory of 1000 u32
// (NPA → index of its code index, 0xFFFFFFFF none); u32 code indexes N, u32
// code entries C, u32 thousands groups G, u32 zero; then N code indexes of
// 16 words of 16 bytes — u64 bitmap over the NXXs 64*w to 64*w+63, u32 index
// of the word's first code entry, u32 zero — so a code's entry is the word's
// first index plus the number of set bits below the code's own; then C code
// entries of 20 bytes — u32 carrier index + 1 (0: no whole-code row), u32
// rate center index, u32 LRN index + 1 (0: none), u32 activation time, u32
// thousands group + 1 (0: none); then G groups of 10 thousands entries
// (indexed by X) of 16 bytes, laid out as the first four fields of a code
// entry. A number's most specific row is its thousands entry when that
// entry's carrier is not 0, else its code entry; a number whose code has no
// entry, or whose code entry and thousands entry both have carrier 0, is in
// a vacant code or block.
//
// # Live updates and the journal
//
// ApplyBatch adds updates on top of the mapped file; they are kept in the
// journal beside it (JournalPath: the table's path + ".journal"), whose
// layout is documented in format/internal/journal: a header, update records
// and commit records. A batch is acknowledged only after its updates and its
// commit record are fsync'd; replay applies committed batches only, drops an
// incomplete last batch (a crash during the append), and refuses any other
// damage with ErrJournalCorrupt and the byte offset (CheckJournal reports,
// RecoverJournal sets the damaged journal aside). A failed append is cut off
// before ApplyBatch returns, so a running process and a restarted one agree;
// a journal that cannot be cut back refuses updates (ErrJournalBroken).
// Compact folds pending updates into a new file and rewrites the journal to
// what the new file lacks, carrying idempotency keys of the last
// IdempotencyWindow forward.
//
// Every file the package writes — built and compacted tables, journal
// rewrites — is written to "." + base name + ".tmp-…" beside it under an
// advisory lock, fsync'd, verified where it is a table, and renamed into
// place; Open and WriteFile remove such files left by a killed writer. A
// table that arrives from elsewhere as a stream (a download) goes in the
// same way through Install, which refuses a stream that is cut short or
// damaged.
//
// CNAMNAME: u64 names, u64 names per chunk K, u64 chunks C, C+1 u64 frame
// offsets (relative to the first frame; the last is the total length), then
// C zstd frames. Frame c decompresses to names c*K to c*K+K-1, each a length
// byte and that many bytes.
package format
