-- The web interface's sessions (package webui), kept here so that every
-- node serving this store knows them: one row per signed-in browser, by
-- the SHA-256 of its cookie (the cookie itself is stored nowhere), with
-- the hash and id of the key it signed in with (an account's key, or an
-- admin key of a keys file: no foreign key).
CREATE TABLE web_sessions (
    id         bytea PRIMARY KEY,
    role       text NOT NULL,
    key_sha256 bytea NOT NULL,
    key_id     text NOT NULL,
    account_id text NOT NULL DEFAULT '',
    rate_limit integer NOT NULL DEFAULT 0,
    created    timestamptz NOT NULL,
    seen       timestamptz NOT NULL,
    flash      text NOT NULL DEFAULT ''
);
CREATE INDEX web_sessions_key ON web_sessions (key_sha256, created);
CREATE INDEX web_sessions_seen ON web_sessions (seen);
