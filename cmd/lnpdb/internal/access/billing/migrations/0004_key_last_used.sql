-- When a lookup last came with each key, as the serving processes report
-- it every few seconds (Store.KeysUsed); NULL until then.
ALTER TABLE api_keys ADD COLUMN last_used timestamptz;
