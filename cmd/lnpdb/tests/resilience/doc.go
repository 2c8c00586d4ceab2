// Package resilience is lnpdb's standing resilience suite. Its tests start
// the real lnpdb binary (built once per run) as several nodes on one real
// PostgreSQL (accounts and the update log) and one real Redis (the shared
// rate limit), with every front end on (REST, GraphQL, SIP, ENUM, pdb), and
// attack them from outside in one run:
//
//   - descriptors exhausted through each TCP front end (HTTP, SIP, DNS)
//     of a node running under a low RLIMIT_NOFILE;
//   - PostgreSQL frozen (SIGSTOP) and stopped under billed load;
//   - Redis frozen and stopped under load;
//   - a node killed with SIGKILL under load;
//   - a hostile origin serving a table to lnpdb pull;
//   - every way a customer obtains a billed answer (REST, bulk, GraphQL,
//     the account playground) and a bulk answer its client resets after
//     reading 2,000 bytes. SIP, ENUM and pdb take no key: not billed.
//
// After each attack it checks that the node is alive and every front end
// not under attack still answers, that the lookups charged in the ledger
// equal the answers the clients received (a killed node may leave the
// lookups it answered since its last sync uncharged: never more charged
// than delivered), and that the nodes agree on every updated number.
//
// It takes minutes, so it runs only when LNPDB_RESILIENCE is set (.ci/run
// sets it: LNPDB_RESILIENCE=1 go test ./cmd/lnpdb/tests/resilience). It
// runs on Linux (prlimit, /proc, SIGSTOP); it skips, saying which Debian
// package is missing, without postgresql or redis-server, and with -short,
// and under -race (the binary it attacks is built without it).
package resilience
