// Package pgschema owns what every PostgreSQL-backed store of lnpdb does
// alike: connecting (a pgx pool, checked with a ping) and bringing the
// database to the store's schema by applying its embedded migrations, each
// once, in order, under one advisory lock, so that processes starting
// together do not race. Each store keeps its own record of the migrations
// it applied (its own table), so that stores can share one database.
//
// A store may live in a schema of its own ([Connect]'s schema): the schema
// is created when absent, and every connection of the store's pool, and
// every connection made from a copy of the pool's configuration (the
// stores' LISTEN connections), has search_path set to that schema alone
// when it opens, so that no statement can miss it; its LISTEN/NOTIFY
// channels are named after it ([Channel]), so that stores in different
// schemas of one database do not hear each other. With no schema a store
// uses the connection's own search_path (PostgreSQL's default: public).
package pgschema

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/redact"
)

// migrationLock is the advisory lock every store's migrations run under.
const migrationLock = 7306541

// schemaName is what a schema option takes: a lowercase SQL identifier
// short enough that a channel named after it stays within PostgreSQL's 63
// bytes, which needs no quoting anywhere and reads the same in psql.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,39}$`)

// CheckSchema reports why name cannot be a store's schema, or nil.
func CheckSchema(name string) error {
	if !schemaName.MatchString(name) || strings.HasPrefix(name, "pg_") {
		return fmt.Errorf("schema %q: want a lowercase name of letters, digits and _, starting with a letter or _, at most 40 characters, not pg_…", name)
	}
	return nil
}

// Channel is the LISTEN/NOTIFY channel base of a store in schema: base
// itself with no schema, else base_schema. Quote it with
// pgx.Identifier{…}.Sanitize() for LISTEN.
func Channel(base, schema string) string {
	if schema == "" {
		return base
	}
	return base + "_" + schema
}

// Connect opens a pool on dsn and pings it within 10 s; with schema not
// "", every connection's search_path is that schema alone (the schema need
// not exist yet: [Migrate] creates it). what names the store in errors,
// with the DSN's password redacted.
func Connect(ctx context.Context, dsn, schema, what string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, redact.Err(fmt.Errorf("%s DSN %q: %w", what, Redact(dsn), err), dsn)
	}
	if schema != "" {
		if err := CheckSchema(schema); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		// A run-time parameter of the startup message: set before the
		// first statement of every connection, and kept by ConnConfig's
		// Copy, which the LISTEN connections are made from.
		cfg.ConnConfig.RuntimeParams["search_path"] = schema
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
// 10 s: how a store opens its database, in schema ("" for the connection's
// search_path). A migration that fails closes the pool and says which store
// and database it was.
func Open(ctx context.Context, dsn, schema, what string, fsys fs.FS, dir, table string) (*pgxpool.Pool, error) {
	pool, err := Connect(ctx, dsn, schema, what)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := Migrate(cctx, pool, schema, fsys, dir, table); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%s %s: migrating: %w", what, Redact(dsn), err)
	}
	return pool, nil
}

// Migrate applies the files dir/NNNN_*.sql of fsys that the table named
// table (created when missing) does not list yet, in the order of NNNN,
// in one transaction under an advisory lock; schema, when not "", is
// created first if absent (pool's connections search it: see Connect).
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string, fsys fs.FS, dir, table string) error {
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
		if schema != "" {
			// Looked up first: CREATE SCHEMA IF NOT EXISTS asks for the
			// database's CREATE privilege even when the schema exists,
			// which a role given a schema made for it lacks.
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
					return fmt.Errorf("creating schema %s: %w", schema, err)
				}
			}
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

// Redact hides the password of a DSN (package redact).
func Redact(dsn string) string { return redact.DSN(dsn) }
