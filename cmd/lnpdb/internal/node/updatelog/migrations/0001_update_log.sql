-- The shared, ordered log of port updates that every lnpdb serve node
-- follows, and where each node says how far it has applied it.

-- One row names this log, so that a node can tell it from another log
-- (a recreated database) whose sequence numbers mean something else.
CREATE TABLE update_log_info (
    id      text PRIMARY KEY,
    created timestamptz NOT NULL DEFAULT now()
);
INSERT INTO update_log_info (id) VALUES (md5(random()::text || clock_timestamp()::text));

CREATE TABLE update_log (
    seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    posted          timestamptz NOT NULL DEFAULT now(),
    node            text NOT NULL,     -- the node it was posted to
    idempotency_key text UNIQUE,       -- the poster's Idempotency-Key, if any
    batch_id        text NOT NULL UNIQUE, -- chosen by the posting node: finds an append whose commit went unanswered
    fingerprint     bytea NOT NULL CHECK (length(fingerprint) = 32), -- SHA-256 of feed
    feed            text NOT NULL,     -- the batch as an update feed (CSV: action,tn,lrn,spid,activated_at)
    added           integer NOT NULL,
    modified        integer NOT NULL,
    deleted         integer NOT NULL
);

CREATE TABLE update_log_nodes (
    node        text PRIMARY KEY,
    applied_seq bigint NOT NULL,
    updated     timestamptz NOT NULL DEFAULT now()
);
