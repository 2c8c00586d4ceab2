-- Accounts, keys, wallets, prices, leases and the usage ledger.
-- Amounts are integers in micro-dollars (1 USD = 1,000,000).

CREATE TABLE accounts (
    id       text PRIMARY KEY,
    name     text NOT NULL,
    status   text NOT NULL CHECK (status IN ('active', 'suspended')),
    created  timestamptz NOT NULL,
    -- credit not held by a lease; never negative
    balance  bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
    credited bigint NOT NULL DEFAULT 0 CHECK (credited >= 0)
);

CREATE TABLE api_keys (
    id         text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    label      text NOT NULL,
    sha256     bytea NOT NULL UNIQUE CHECK (length(sha256) = 32),
    rate_limit integer NOT NULL CHECK (rate_limit >= 0),
    created    timestamptz NOT NULL,
    revoked    timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE credits (
    account_id text NOT NULL REFERENCES accounts (id),
    ref        text NOT NULL,
    amount     bigint NOT NULL CHECK (amount > 0),
    created    timestamptz NOT NULL,
    PRIMARY KEY (account_id, ref)
);

-- account_id '' holds the defaults
CREATE TABLE prices (
    account_id text NOT NULL,
    kind       text NOT NULL,
    price      bigint NOT NULL CHECK (price >= 0),
    PRIMARY KEY (account_id, kind)
);

-- free lookups of a month granted to leases (spent or held)
CREATE TABLE free_tier (
    account_id text NOT NULL REFERENCES accounts (id),
    month      text NOT NULL,
    taken      bigint NOT NULL CHECK (taken >= 0),
    PRIMARY KEY (account_id, month)
);

CREATE TABLE leases (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    holder     text NOT NULL,
    month      text NOT NULL,
    credit     bigint NOT NULL CHECK (credit >= 0),
    free       bigint NOT NULL CHECK (free >= 0),
    seq        bigint NOT NULL,
    expires    timestamptz NOT NULL
);
CREATE INDEX leases_expires ON leases (expires);
CREATE INDEX leases_account ON leases (account_id);

-- the usage ledger: one row per account, day (UTC) and kind
CREATE TABLE usage (
    account_id text NOT NULL REFERENCES accounts (id),
    day        date NOT NULL,
    kind       text NOT NULL,
    lookups    bigint NOT NULL CHECK (lookups >= 0),
    free       bigint NOT NULL CHECK (free >= 0),
    amount     bigint NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (account_id, day, kind)
);
