// Package webhook owns how lnpdb tells a customer's server of an event
// (a lookup job finished): the payload's shape, its signature by the
// Standard Webhooks scheme (webhook-id, webhook-timestamp and
// webhook-signature headers, HMAC-SHA256 under the account's whsec_
// secret), the HTTP client that sends it, which refuses to connect to
// private, loopback, link-local and other internal addresses (checked on
// the address actually dialed, after DNS resolution) unless allowed, and
// the retry schedule by which a [Deliverer] works an [Outbox] of pending
// deliveries until each is answered with a 2xx or a day has passed. The
// outbox itself, durable, belongs to the accounts store.
package webhook
