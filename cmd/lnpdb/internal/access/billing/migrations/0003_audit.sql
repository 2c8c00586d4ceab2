-- The audit log: each change an operator made through the admin API or the
-- operator console, written in the transaction of the change.
CREATE TABLE audit_log (
    id         bigserial PRIMARY KEY,
    at         timestamptz NOT NULL,
    admin_key  text NOT NULL,
    remote     text NOT NULL,
    via        text NOT NULL,
    action     text NOT NULL,
    account_id text NOT NULL, -- '' for the default prices
    detail     text NOT NULL
);
CREATE INDEX audit_log_account ON audit_log (account_id, id);
