// Package format is the lnpdb table file: its byte layout, the Writer that
// writes it, Open that maps it for reading, OpenWriter that opens it for
// live updates and compaction, and the raw
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
// The iterators PortedNumbers and Blocks hold one such reference for their
// whole walk.
// Strings in
// records are ordinary Go strings decoded at Open; they stay valid after
// Close. A table file must never be written in place while mapped (the
// process would die of SIGBUS); replace it by renaming a new file over it,
// which is what WriteFile does.
//
// # Performance
//
// Open reads the header, the directory and the small dictionaries; its cost
// does not depend on how many numbers the table holds. A lookup of a
// per-number section computes its bucket from the number alone and reads
// that one 64-byte cache line, and the next one with it: about one search
// in six (17.6 % of lrn's Large benchmark mix at 10M ported numbers) goes
// on past an overflowing home bucket, and the second line, loaded together
// with the first, costs it no second wait. The lines of several sections
// are independent loads the CPU overlaps. The block data (5 MB at 100M
// ported numbers) is read while those lines are on their way, and the
// decoded dictionaries (6 MiB at 100M) are small beside the table. Lookups
// allocate nothing. GetMany computes every address of a batch first and
// touches them all before it searches any, so the memory accesses of many
// numbers are in flight together.
// The file is written in 2 MiB-aligned pieces and its mapping advised
// MADV_HUGEPAGE, so that where the page cache holds files in large folios
// (Linux 6.18 on ext4 does) the table is mapped in huge
// pages at no cost in memory; HugePages holds it in huge pages
// anywhere, in memory of its own. Either saves the TLB misses of random
// reads over a large table.
//
// # File layout
//
// All integers are little-endian. A file is a header, a section directory and
// the sections.
//
// Header, 64 bytes:
//
//	[0,8)   magic "LNPDB\r\n\x1a"
//	[8,10)  format version, 5 (a file of another version is refused
//	        with ErrFormat, naming both versions; an older one with the
//	        advice to rebuild it)
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
//	PAIRS     zstd  uvarint count, then per route the uvarints LRN index,
//	                carrier index and SV Type (0 none, else the NPAC's
//	                value + 1, at most 11): the distinct (LRN, SPID, SV
//	                Type) routes of ported records. An LRN belongs to one
//	                switch and a provider's numbers have few SV Types, so
//	                routes are few and one index is narrower than three.
//	                (Version 3 had no SV Type.)
//	MSGTUPLE  zstd  uvarint count, then per tuple uvarint provider, a byte
//	                0/1 enabled, uvarint country, uvarint country code,
//	                uvarint reference id (indexes into MSGSTRS): the
//	                distinct messaging records.
//	BLOCKS    raw   block data, described below.
//	PORTED    raw   per-number section; fields: route index into PAIRS,
//	                activation time (unix seconds, 0 unknown; a time
//	                field, below).
//	MSGRECS   raw   per-number section; field: tuple index into MSGTUPLE.
//	CNAM      raw   per-number section; field: name index into CNAMNAME.
//	TRUST     raw   per-number section; fields: spam type (an index into
//	                NONE, SPAM, SCAM, ROBOCALL, TELEMARKETER), complaint
//	                count, first reported, last reported (time fields).
//	CNAMNAME  raw   the distinct caller names in zstd chunks, below.
//
// A per-number section is a hash table per NPA of 64-byte buckets. It
// starts with a 64-byte header:
//
//	[0,8)   u64 number of records
//	[8,16)  the bit width of each record field in order (1-64; 0 ends
//	        the list)
//	[16,24) u64 offset of the bucket array from the section's start
//	[24,32) u64 number of buckets in the array
//	[32,64) a u32 base per field: 0 for a plain field; for a time field
//	        the earliest nonzero time, and the field then stores t as
//	        t - base + 1 (0 stays 0, unknown)
//
// then a partition table of 1000 entries of 24 bytes indexed by NPA: u64
// offset of the partition's first bucket from the section start, u32 keys
// n, u32 home buckets B, u32 buckets P (B and the overflow buckets after
// them), u8 displacement bits D, 3 zero bytes. An empty partition is all
// zeros; the partitions' buckets follow each other in NPA order. Zero bytes
// pad the table to the next 64-byte boundary of the file (the bucket
// array's offset), and 64 zero bytes follow the last bucket.
//
// A number's key is its remainder within the NPA (NXX*10000 + line) less
// 2,000,000, below 2^23, and its permuted key x is perm(key), a bijection
// on [0, 2^23), in 23-bit arithmetic (multiplications modulo 2^23):
//
//	k *= 0x51e995; k ^= k >> 12; k *= 0x073593; k ^= k >> 11
//
// Its home bucket is h = x*B >> 23, and its fraction is f = (x*B mod 2^23)
// >> s, s the largest with 2^s <= B (at most 22): the keys of one home give
// values of x*B that are B apart, so their fractions are distinct, and
// ascend with x, in R = 23 - s bits. An entry's key part is k = f + d*2^R,
// d its displacement (the entry's bucket less its home bucket) in D bits.
// A bucket holds S = min(63, floor(504/(8 + W))) slots, W = max(R+D, 8) - 8
// + F, F the sum of the field widths: byte 0 counts the entries (bits 0-5)
// and has bit 7 set when entries whose home it is sit in later buckets;
// bytes 1 to S are the slots' tags, the low 8 bits of each entry's key
// part; entry i occupies bits [8 + 8S + i*W, 8 + 8S + (i+1)*W) of the
// bucket, bit j being bit j%8 of byte j/8: the key part's bits above its
// tag (max(R+D, 8) - 8 of them), then the fields in order. The tags and
// bits past the bucket's count are zero.
//
// Entries are in ascending order of x through the partition's buckets, and
// each sits in the first bucket, from its home on, with room: a bucket with
// room left is never passed over. A bucket's entries therefore ascend in
// k with its displacement bits inverted. A lookup reads bucket h and looks
// for the entry with key part f (d = 0): its tag among the tags, then the
// rest in the entries whose tag matches. If there is none it goes on to
// bucket h+1, looking for f + 2^R, only when bit 7 is set and the bucket's
// last entry comes before the key (its inverted key part is smaller); from
// there on, to bucket h+d+1 only when bucket h+d is full and its last entry
// comes before the key. Every bit of the key is compared, so a number not
// in the section never gets a record.
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
// A table has one writer: OpenWriter takes an exclusive advisory lock on
// LockPath (the table's path + ".lock"), held until Close and released by
// the kernel if the process dies, and a second writer's OpenWriter fails
// with ErrLocked, so that no two processes append to one journal or
// replace it under each other. Open reads a table beside its writer: it
// takes no lock, replays the journal's complete batches, writes nothing,
// and reads both again at Reload.
//
// Every file the package writes — built and compacted tables, journal
// rewrites — is written to "." + base name + ".tmp-…" beside it under an
// advisory lock, fsync'd, verified where it is a table, and renamed into
// place; OpenWriter and WriteFile remove such files left by a killed writer. A
// table that arrives from elsewhere as a stream (a download) goes in the
// same way through Install, which refuses a stream that is cut short or
// damaged.
//
// CNAMNAME: u64 names, u64 names per chunk K, u64 chunks C, C+1 u64 frame
// offsets (relative to the first frame; the last is the total length), then
// C zstd frames. Frame c decompresses to names c*K to c*K+K-1, each a length
// byte and that many bytes.
package format
