-- The batches a node passed without applying them (its table refused them:
-- an SPID it lacks), so that a batch counts as applied only by the nodes
-- whose table took it. Emptied of a sequence once the node applies it after
-- all (its table gained what it lacked).
ALTER TABLE update_log_nodes ADD COLUMN skipped bigint[] NOT NULL DEFAULT '{}';
