-- Lookup jobs: lists of numbers answered in chunks by any process, each
-- chunk's answers and their charge committed together; the webhook
-- secrets of accounts and the outbox of webhooks to deliver.

CREATE TABLE jobs (
    id          text PRIMARY KEY,
    account_id  text NOT NULL REFERENCES accounts (id),
    kind        text NOT NULL,
    enhanced    boolean NOT NULL,
    messaging   boolean NOT NULL,
    webhook_url text NOT NULL,
    status      text NOT NULL,
    total       bigint NOT NULL CHECK (total > 0),
    done        bigint NOT NULL CHECK (done >= 0 AND done <= total),
    paid        bigint NOT NULL CHECK (paid >= 0),
    free        bigint NOT NULL CHECK (free >= 0),
    charged     bigint NOT NULL CHECK (charged >= 0),
    chunks      integer NOT NULL,
    created     timestamptz NOT NULL,
    finished    timestamptz
);
CREATE INDEX jobs_account ON jobs (account_id, created);
CREATE INDEX jobs_active ON jobs (created) WHERE status IN ('queued', 'running');

-- a chunk's numbers (zstd, one a line); done of them answered; a claim is
-- current until claimed_until, after which another worker may take it
CREATE TABLE job_chunks (
    job_id        text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq           integer NOT NULL,
    size          integer NOT NULL,
    done          integer NOT NULL DEFAULT 0,
    parts         integer NOT NULL DEFAULT 0,
    input         bytea NOT NULL,
    claim         text NOT NULL DEFAULT '',
    claimed_until timestamptz,
    PRIMARY KEY (job_id, seq)
);

-- the answers of one commit of a chunk (zstd, one a line)
CREATE TABLE job_results (
    job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq    integer NOT NULL,
    part   integer NOT NULL,
    data   bytea NOT NULL,
    PRIMARY KEY (job_id, seq, part)
);

-- the secret an account's webhooks are signed with (the server signs, so
-- it is kept, not hashed)
CREATE TABLE webhook_secrets (
    account_id text PRIMARY KEY REFERENCES accounts (id),
    secret     text NOT NULL,
    created    timestamptz NOT NULL
);

-- webhooks to deliver; id is the webhook-id, the same on every attempt
CREATE TABLE webhook_outbox (
    id           text PRIMARY KEY,
    account_id   text NOT NULL REFERENCES accounts (id),
    url          text NOT NULL,
    body         bytea NOT NULL,
    attempts     integer NOT NULL DEFAULT 0,
    next_attempt timestamptz NOT NULL,
    created      timestamptz NOT NULL,
    state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    last_error   text NOT NULL DEFAULT ''
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt) WHERE state = 'pending';
