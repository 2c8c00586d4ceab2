package bench

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/redis/go-redis/v9"
	bolt "go.etcd.io/bbolt"

	"github.com/lnpdb/lnpdb/format"
)

// System is one engine under test, loaded and ready to answer.
type System interface {
	// Lookup answers one number; the harness compares these answers
	// across systems before it times anything.
	Lookup(tn uint64) (Answer, error)
	Close() error
}

// lnpdb

// LNPDB is an open lnpdb table.
type LNPDB struct{ DB *format.DB }

// OpenLNPDB opens the table at path and reports how long Open took (the
// median of five opens; Open maps the file and decodes the dictionaries).
// Every open is Shared, as a reader's: the variants hold the table open
// more than once, which writers' opens, each taking the table's lock,
// could not.
func OpenLNPDB(path string) (*LNPDB, float64, error) {
	var times []float64
	for range 5 {
		t := time.Now()
		db, err := format.Open(path)
		if err != nil {
			return nil, 0, err
		}
		times = append(times, float64(time.Since(t).Nanoseconds()))
		db.Close()
	}
	l, err := ReopenLNPDB(path)
	return l, median(times), err
}

// Variants are the lnpdb configurations a run can time beside the default
// (lnpdb-bench -lnpdb-variants): the same table opened once more with these
// Open options. Adding a configuration is adding a row.
var Variants = map[string][]format.Option{
	// verify: opened with a full check first; lookups are unchanged, so it
	// measures how far two opens of one table differ (a control).
	"verify": {format.Verify()},
	// hugepages: the table copied into anonymous memory on huge pages
	// (format.HugePages).
	"hugepages": {format.HugePages()},
}

// ReopenLNPDB opens the table at path without timing it.
func ReopenLNPDB(path string, opts ...format.Option) (*LNPDB, error) {
	db, err := format.Open(path, opts...)
	if err != nil {
		return nil, err
	}
	return &LNPDB{db}, nil
}

// Lookup reads the number's ported record.
func (l *LNPDB) Lookup(tn uint64) (Answer, error) {
	r, err := l.DB.Get(tn, format.FieldPorted)
	if err != nil {
		return Answer{}, err
	}
	return portedAnswer(r.Ported)
}

func portedAnswer(p format.Ported) (Answer, error) {
	if !p.OK {
		return Answer{}, nil
	}
	a := Answer{Found: true, ActivatedAt: p.ActivatedAt}
	if p.Carrier != nil {
		a.SPID = p.Carrier.OCN
	}
	var err error
	a.LRN, err = lrn10(p.LRN)
	return a, err
}

// lrn10 turns an 11-digit LRN ("1NPANXXXXXX") into its 10-digit number.
func lrn10(s string) (uint64, error) {
	if len(s) != 11 || s[0] != '1' {
		return 0, fmt.Errorf("LRN %q is not 11 digits starting with 1", s)
	}
	return strconv.ParseUint(s[1:], 10, 64)
}

// Close closes the table.
func (l *LNPDB) Close() error { return l.DB.Close() }

// The Go map

// MapRec is the map's value: the fields of a ported record, packed (24
// bytes). A map of strings would be bigger and slower; this is the strongest
// plain-Go contender.
type MapRec struct {
	LRN         uint64
	ActivatedAt int64
	SPID        [4]byte
}

// Map is a Go map from 10-digit number to record.
type Map struct{ M map[uint64]MapRec }

// LoadMap builds the map from recs, sized up front.
func LoadMap(recs []Rec) *Map {
	m := make(map[uint64]MapRec, len(recs))
	for _, r := range recs {
		m[r.TN] = MapRec{LRN: r.LRN, ActivatedAt: r.ActivatedAt, SPID: r.SPID}
	}
	return &Map{m}
}

// Lookup reads the number's record.
func (m *Map) Lookup(tn uint64) (Answer, error) {
	r, ok := m.M[tn]
	if !ok {
		return Answer{}, nil
	}
	return Answer{Found: true, LRN: r.LRN, SPID: string(r.SPID[:]), ActivatedAt: r.ActivatedAt}, nil
}

// Close drops the map.
func (m *Map) Close() error { m.M = nil; return nil }

// SQLite (github.com/mattn/go-sqlite3: the C library itself, through cgo)

var registerSQLite sync.Once

const sqliteDriver = "sqlite3-lnpdb-bench"

// SQLite is a read-only connection pool on a database holding
// ported(tn INTEGER PRIMARY KEY, lrn, spid, activated_at).
type SQLite struct {
	DB   *sql.DB
	Stmt *sql.Stmt
}

// LoadSQLite writes recs (sorted by TN) into a new database at path, in one
// transaction with the journal and syncs off, as a bulk load would.
func LoadSQLite(ctx context.Context, path string, recs []Rec) error {
	os.Remove(path)
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=OFF&_sync=OFF")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE ported(tn INTEGER PRIMARY KEY, lrn, spid, activated_at)`); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO ported(tn, lrn, spid, activated_at) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for i, r := range recs {
		if i%65536 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if _, err := ins.Exec(int64(r.TN), int64(r.LRN), string(r.SPID[:]), r.ActivatedAt); err != nil {
			return err
		}
	}
	if err := ins.Close(); err != nil {
		return err
	}
	return tx.Commit()
}

// OpenSQLite opens the database read-only with a pool of conns connections,
// each with the whole file memory-mapped (mmap_size) so that a read costs no
// system call: SQLite at its fastest for this access pattern.
func OpenSQLite(path string, conns int) (*SQLite, error) {
	registerSQLite.Do(func() {
		sql.Register(sqliteDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			_, err := c.Exec(`PRAGMA mmap_size=1099511627776; PRAGMA query_only=1`, nil)
			return err
		}})
	})
	db, err := sql.Open(sqliteDriver, "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	stmt, err := db.Prepare(`SELECT lrn, spid, activated_at FROM ported WHERE tn = ?`)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &SQLite{db, stmt}, nil
}

// Lookup runs the prepared SELECT.
func (s *SQLite) Lookup(tn uint64) (Answer, error) {
	var (
		lrn, at int64
		spid    string
	)
	err := s.Stmt.QueryRow(int64(tn)).Scan(&lrn, &spid, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Answer{}, nil
	}
	if err != nil {
		return Answer{}, err
	}
	return Answer{Found: true, LRN: uint64(lrn), SPID: spid, ActivatedAt: at}, nil
}

// Close closes the pool.
func (s *SQLite) Close() error { s.Stmt.Close(); return s.DB.Close() }

// Redis (github.com/redis/go-redis/v9): one hash per number, key = the
// 10-digit number, fields lrn, spid, activated_at.

// Redis is a client of a Redis server holding the ported numbers.
type Redis struct{ C *redis.Client }

// RedisFields are the hash fields a lookup reads.
var RedisFields = []string{"lrn", "spid", "activated_at"}

// DialRedis connects to the server at addr with a pool of at least poolSize
// connections.
func DialRedis(ctx context.Context, addr string, poolSize int) (*Redis, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: poolSize, DisableIdentity: true,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("redis at %s: %w", addr, err)
	}
	return &Redis{c}, nil
}

// Load empties the server and writes recs with HSET, 10,000 commands per
// pipeline, from two connections at once.
func (r *Redis) Load(ctx context.Context, recs []Rec) error {
	if err := r.C.FlushAll(ctx).Err(); err != nil {
		return err
	}
	const chunk = 10000
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var kb, lb, ab []byte
			for base := w * chunk; base < len(recs); base += 2 * chunk {
				p := r.C.Pipeline()
				for _, rec := range recs[base:min(base+chunk, len(recs))] {
					kb = strconv.AppendUint(kb[:0], rec.TN, 10)
					lb = strconv.AppendUint(lb[:0], rec.LRN, 10)
					ab = strconv.AppendInt(ab[:0], rec.ActivatedAt, 10)
					p.HSet(ctx, string(kb), "lrn", string(lb), "spid", string(rec.SPID[:]), "activated_at", string(ab))
				}
				if _, err := p.Exec(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// UsedMemory is the server's INFO memory used_memory and used_memory_rss.
func (r *Redis) UsedMemory(ctx context.Context) (used, rss int64, err error) {
	s, err := r.C.Info(ctx, "memory").Result()
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.SplitSeq(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "used_memory":
			used, _ = strconv.ParseInt(v, 10, 64)
		case "used_memory_rss":
			rss, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return used, rss, nil
}

// Lookup reads the number's hash with HMGET.
func (r *Redis) Lookup(tn uint64) (Answer, error) {
	vals, err := r.C.HMGet(context.Background(), strconv.FormatUint(tn, 10), RedisFields...).Result()
	if err != nil {
		return Answer{}, err
	}
	return redisAnswer(vals)
}

func redisAnswer(vals []any) (Answer, error) {
	if len(vals) != 3 {
		return Answer{}, fmt.Errorf("HMGET returned %d values", len(vals))
	}
	if vals[0] == nil && vals[1] == nil && vals[2] == nil {
		return Answer{}, nil
	}
	var s [3]string
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			return Answer{}, fmt.Errorf("HMGET field %s is %T", RedisFields[i], v)
		}
		s[i] = str
	}
	lrn, err := strconv.ParseUint(s[0], 10, 64)
	if err != nil {
		return Answer{}, err
	}
	at, err := strconv.ParseInt(s[2], 10, 64)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Found: true, LRN: lrn, SPID: s[1], ActivatedAt: at}, nil
}

// Close closes the client (the server is the script's to stop).
func (r *Redis) Close() error { return r.C.Close() }

// bbolt (go.etcd.io/bbolt): one bucket, key = the number as 8 big-endian
// bytes, value = LRN (8 bytes), activation (8), SPID (4).

var bucketName = []byte("ported")

// Bolt is a read-only bbolt database.
type Bolt struct{ DB *bolt.DB }

// LoadBolt writes recs (sorted by TN) into a new database at path: sorted
// appends into full pages (FillPercent 1), 1M keys per transaction, syncs
// off until the end: bbolt's fastest bulk load.
func LoadBolt(ctx context.Context, path string, recs []Rec) error {
	os.Remove(path)
	db, err := bolt.Open(path, 0o644, &bolt.Options{NoSync: true, NoFreelistSync: true, Timeout: time.Second})
	if err != nil {
		return err
	}
	const chunk = 1 << 20
	for base := 0; base < len(recs) || base == 0; base += chunk {
		if err := ctx.Err(); err != nil {
			db.Close()
			return err
		}
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketName)
			if err != nil {
				return err
			}
			b.FillPercent = 1
			// Put keeps the key and value slices until the commit: each
			// record gets its own 28 bytes of one buffer.
			part := recs[base:min(base+chunk, len(recs))]
			buf := make([]byte, 28*len(part))
			for i, r := range part {
				k, v := buf[28*i:28*i+8:28*i+8], buf[28*i+8:28*i+28:28*i+28]
				binary.BigEndian.PutUint64(k, r.TN)
				binary.BigEndian.PutUint64(v[0:], r.LRN)
				binary.BigEndian.PutUint64(v[8:], uint64(r.ActivatedAt))
				copy(v[16:], r.SPID[:])
				if err := b.Put(k, v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			db.Close()
			return err
		}
	}
	if err := db.Sync(); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// OpenBolt opens the database read-only.
func OpenBolt(path string) (*Bolt, error) {
	db, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	return &Bolt{db}, nil
}

// Lookup reads the number's value in a read transaction.
func (b *Bolt) Lookup(tn uint64) (a Answer, err error) {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], tn)
	err = b.DB.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketName).Get(k[:])
		if v == nil {
			return nil
		}
		if len(v) != 20 {
			return fmt.Errorf("bbolt value of %d bytes", len(v))
		}
		a = Answer{Found: true, LRN: binary.BigEndian.Uint64(v), ActivatedAt: int64(binary.BigEndian.Uint64(v[8:])), SPID: string(v[16:20])}
		return nil
	})
	return a, err
}

// Close closes the database.
func (b *Bolt) Close() error { return b.DB.Close() }

// Memory readings.

// RSS is the process's resident set size in bytes, from /proc/self/status.
func RSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// HeapInUse collects garbage, returns freed memory to the OS, and reports
// the bytes of live heap objects.
func HeapInUse() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// FileSize is the size of the file at path, 0 if it cannot be read.
func FileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
