// Package httpapi serves lnpdb lookups over HTTP: the REST and GraphQL
// contract of the hosted LRN lookup service (docs/CONTRACT.md), so
// that lnpdb can replace it as a drop-in.
//
// # Routes
//
//	POST /api/v1/lrn        lrn.LookupInto        {phone_number, include_enhanced_lrn, messaging_lookup}
//	POST /api/v1/cnam       cnam.LookupInto       {phone_number}
//	POST /api/v1/messaging  messaging.LookupInto  {phone_number}
//	POST /api/v1/trust      trust.LookupInto      {phone_number}
//	POST /api/v1/lrn/bulk   lrn.LookupMany        {phone_numbers (1 to 1,000), include_enhanced_lrn, messaging_lookup}
//	POST /graphql           lookupLrn, lookupCnam, lookupMessagingProvider, lookupTrust, lookupLrnBulk
//	GET  /graphql           the same, queries only (GraphQL over HTTP)
//	GET  /api/v1/status     table version, build time and counts (no key)
//	GET  /openapi.json      the OpenAPI 3.1 description of the REST API (no key)
//	GET  /metrics           Prometheus metrics, when [Config.ServeMetrics] (no key)
//	GET  /api/v1/usage      the caller's account's usage, when [Config.Accounts] is a [UsageReporter]
//
// REST bodies are the lookup packages' Result structs as encoding/json
// marshals them. The LRN answer, the hot path, is written by an encoder of
// its own and the usual request bodies are read by a decoder of their own;
// tests hold both to encoding/json's bytes and values.
//
// # Requests
//
// A lookup request is a POST with Content-Type application/json (an optional
// charset parameter must name UTF-8) and a JSON object body of at most 64 KiB
// (after gzip decoding, when [Conventions] wraps the handler).
// Unknown fields are ignored; a field of the wrong type is rejected; a null
// field counts as absent. Every failure is a JSON body
// {"error", "code", "details"} with the status of CONTRACT §6; bad input is
// never answered with a 500. Unknown paths answer 404 with code NOT_FOUND.
//
// # Keys and rate limits
//
// Every lookup, REST and GraphQL alike, needs Authorization: Bearer <key>.
// Keys live only as SHA-256 hashes (see [ParseKeys] for the file format) and
// are compared in constant time. Each key has a lookup budget per fixed
// window (200 per 60 s unless its keys-file line says otherwise), kept by a
// [Limiter]; every authenticated response carries X-RateLimit-Limit,
// X-RateLimit-Remaining and X-RateLimit-Reset, and the IETF RateLimit and
// RateLimit-Policy fields. Every lookup counts: a GraphQL request as many as
// its lookup fields (at most [MaxGraphQLLookups], and the numbers of its
// lookupLrnBulk fields), a bulk request as many as its numbers; a request
// that makes none counts one. A request whose lookups exceed what is left
// is answered 429 before any is done; one whose lookups exceed the key's
// whole limit, which no wait would let through, is refused with 422
// BULK_EXCEEDS_RATE_LIMIT (in GraphQL, an error with that code). GraphQL and bulk requests of one key
// run at most [MaxInFlightPerKey] at a time; the next waits up to a second
// for a place, then is answered 429.
// When the limiter itself fails the request is let through and the failure is
// logged: routing must not stop because a shared counter store is down.
// The limiter shared by several nodes in Redis (internal/access/redislimit) does
// not fail that way: it decides locally while Redis is away, and with
// [Config.Redis] /api/v1/status shows its health under "redis".
//
// # GraphQL
//
// The schema is schema.graphql; package graph is gqlgen's code generated
// from it, and the resolvers are here. Parsed and validated documents are
// cached, Apollo's automatic persisted queries are accepted
// (extensions.persistedQuery), and introspection is the current spec's.
// gqlgen parses, validates, caches and limits every request; the usual
// lookupLrn — plain fields, no fragments or directives — is then answered
// by two gqlgen extensions (gqlfast.go) that write its JSON from the
// lookup, byte for byte what gqlgen's own execution writes, without
// executing each field: a query of such fields only, without accounts,
// whole (lrnOperation), else field by field (lrnFields). A document
// lrnOperation answered whole is kept as a plan (gqlplan.go): a later
// request for it — its text, or its persisted query's hash — whose
// variables are of the declared types skips gqlgen altogether (no
// operation context, no coercion, no execution) and costs the key's limit
// one per field as before; a variable of the wrong type, a missing one,
// another operation name or other extensions go to gqlgen, which answers
// its own errors. Everything else is executed by gqlgen.
// A lookup's own failure (invalid number, vacant code) answers
// success: false and the REST error text in error, with HTTP 200; a malformed
// document answers the standard errors array, also with HTTP 200 — or 400
// when the client accepts application/graphql-response+json, which it then
// gets. At most 20 errors are reported, each clipped. A missing key, an
// exceeded rate limit, a non-JSON body or a missing table answer at the HTTP
// level exactly as REST does.
//
// # HTTP
//
// [Conventions] wraps the handler for what clients rely on beside the
// lookups: compressed responses when asked (never a single lookup's answer,
// too small to be worth it), gzip request bodies, request ids, CORS.
// /openapi.json and /api/v1/status carry a weak ETag and Cache-Control and
// answer If-None-Match with 304; other JSON answers to GET carry
// Cache-Control: no-store, answers to POST none (no cache stores them).
//
// # Logs
//
// With [Config.AccessLog], one line per request: method, path, status,
// duration, bytes, the key's id (never the key), the remote address, the
// request id and, for a request with a valid W3C traceparent (or any request
// when [Config.Tracer] is set), its trace-id and span-id; with [Config.AccessLogTo], those lines as JSON, written
// without slog's generic encoding.
// [LogWriter] batches log lines so that they do not cost a system call each,
// and never makes a request wait for a slow or stuck log output: past a
// bounded buffer it drops lines, counts them (exported by
// [Metrics.RegisterLogWriter] as lnpdb_log_lines_dropped_total) and writes a
// notice of how many once the output reads again.
//
// # Traces
//
// A traceparent header is parsed as W3C Trace Context says (traceparent.go)
// and an invalid one ignored. With [Config.Tracer], each request is a server
// span named after its route, the child of the caller's span when the
// header is valid; without it nothing is traced, and a valid header only
// reaches the access log, with a span id of the request's own.
//
// # Tables
//
// The handler reads the table through a [TableSource] on every request, so
// the table can be swapped (see [Table]) while requests run.
package httpapi
