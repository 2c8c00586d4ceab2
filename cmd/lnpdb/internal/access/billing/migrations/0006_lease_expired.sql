-- An expired lease is kept, empty, for a day after what it held went back
-- to the balance: its holder, back from beyond the store's reach, has what
-- it spent of it charged rather than lost.
ALTER TABLE leases ADD COLUMN expired boolean NOT NULL DEFAULT false;
