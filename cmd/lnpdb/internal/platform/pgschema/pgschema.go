// Package pgschema owns what every PostgreSQL-backed store of lnpdb does
// alike: connecting (a pgx pool, checked with a ping) and bringing the
// database to the store's schema by applying its embedded migrations, each
// once, in order, under one advisory lock, so that processes starting
// together do not race. Each store keeps its own record of the migrations
// it applied (its own table), so that stores can share one database.
package pgschema

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationLock is the advisory lock every store's migrations run under.
const migrationLock = 7306541

// Connect opens a pool on dsn and pings it within 10 s. what names the
// store in errors, with the DSN's password redacted.
func Connect(ctx context.Context, dsn, what string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s DSN %q: %w", what, Redact(dsn), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, Redact(dsn), err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(cctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%s %s: %w", what, Redact(dsn), err)
	}
	return pool, nil
}

// Open is Connect, then Migrate of fsys's dir, recorded in table, within
// 10 s: how a store opens its database. A migration that fails closes the
// pool and says which store and database it was.
func Open(ctx context.Context, dsn, what string, fsys fs.FS, dir, table string) (*pgxpool.Pool, error) {
	pool, err := Connect(ctx, dsn, what)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := Migrate(cctx, pool, fsys, dir, table); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%s %s: migrating: %w", what, Redact(dsn), err)
	}
	return pool, nil
}

// Migrate applies the files dir/NNNN_*.sql of fsys that the table named
// table (created when missing) does not list yet, in the order of NNNN,
// in one transaction under an advisory lock.
func Migrate(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS, dir, table string) error {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return err
	}
	sort.Strings(names)
	ident := pgx.Identifier{table}.Sanitize()
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+ident+` (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		for _, name := range names {
			v, err := strconv.Atoi(strings.SplitN(path.Base(name), "_", 2)[0])
			if err != nil {
				return fmt.Errorf("migration %s: no version number", name)
			}
			var done bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+ident+` WHERE version = $1)`, v).Scan(&done); err != nil {
				return err
			}
			if done {
				continue
			}
			sql, err := fs.ReadFile(fsys, name)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, string(sql)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+ident+` (version) VALUES ($1)`, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// Redact hides the password of a DSN given as a URL.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	return u.Redacted()
}
