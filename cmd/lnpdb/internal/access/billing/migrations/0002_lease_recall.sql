-- A process short of credit asks the account's other leases back: each is
-- flagged, and handed back by its holder at its next sync.
ALTER TABLE leases ADD COLUMN recall boolean NOT NULL DEFAULT false;
