// Package webui owns what every page of lnpdb serve's web interface shares:
// the base layout and the style sheet (embedded), the security headers, the
// sessions of signed-in key holders, CSRF protection, signing in and out,
// and the role checks. The pages themselves belong to their areas (the
// customer's /account, package account; the operator's /console), which
// register them here. cmd/lnpdb only wires it (serve --console, default on).
//
// # Paths
//
// The web interface answers under /account, /console and /ui/ ([Owns]);
// everything else is the API's. The foundation serves:
//
//	GET  /ui/style.css          the one style sheet
//	GET  /account/sign-in       the customer's sign-in form (with a Customer realm)
//	POST /account/sign-in       an API key and the form's token → a session, 303 to /account
//	GET  /console/sign-in       the operator's sign-in form (with an Admin realm)
//	POST /console/sign-in       an admin key → a session, 303 to /console
//	POST /ui/sign-out           ends the session (CSRF-checked)
//
// A path served with other methods than the request's is answered 405 with
// Allow (a page, as every answer here); a path not served at all, 404.
//
// # The API of an area
//
//	ui, err := webui.New(webui.Config{Customer: &webui.Realm{...}, Admin: &webui.Realm{...}})
//	page, err := ui.Template(myFS, "templates/mypage.html") // {{define "content"}}…{{end}}
//	ui.HandleCustomer("GET /account/things", func(w http.ResponseWriter, r *http.Request, s *webui.Session) {
//		ui.Render(w, r, page, http.StatusOK, webui.Page{Title: "Things", Data: things})
//	})
//	ui.HandleAdmin("POST /console/things", …) // an operator's session only
//
// [UI.HandleCustomer] and [UI.HandleAdmin] run the handler only for a live
// session of their role: without one, a GET is sent to the role's sign-in
// page (303) and anything else answered 403; a session of the other role
// gets 403. For every method but GET and HEAD they also check, before the
// handler runs, that the request comes from this site (Sec-Fetch-Site and
// Origin, when the browser sends them) and carries the session's CSRF
// token in the form field "csrf" (compared in constant time): a template
// writes it with {{.CSRF}}. Forms are read with a 64 KiB limit
// ([MaxFormBytes]). A file upload ([UI.HandleCustomerUpload]) is a
// multipart form read as a stream within its own limit: its first part
// must be the "csrf" field, checked before the handler reads the rest. [UI.Render] writes a page inside the base layout
// (templates/layout.html): the area's template defines "content" and reads
// its data as .Data; .Session is the session, .Flash a one-time notice
// ([Session.SetFlash], shown on the next page rendered for the session).
//
// # Security
//
// Every response of the web interface carries a Content-Security-Policy
// that allows no inline script or style ([CSP]), X-Frame-Options DENY,
// X-Content-Type-Options nosniff and Referrer-Policy no-referrer; pages
// carry Cache-Control no-store. Templates are html/template, so every value
// is escaped for its context; no template marks a value safe.
//
// A session is an opaque id of 256 bits from crypto/rand in a cookie
// (HttpOnly, SameSite=Strict, Path=/, Secure and named __Host-… under TLS);
// the server keeps only its SHA-256, with the hash of the key signed in
// with — never the key's text. Signing in always makes a new session (an id
// planted before sign-in is never promoted) and ends the one the browser
// had. A session ends at sign-out, after [Config.IdleTimeout] without a
// request (30 minutes), [Config.MaxAge] after sign-in (12 hours), and at
// the first request after its key is revoked, removed from the keys file or
// its account suspended: [Realm.Valid] is asked on every request. Sign-in
// attempts are limited per remote address and per key
// ([Config.SignInPerMinute], with the rate limiter of package ratelimit).
// A sign-in is taken only with the sign-in form's pre-session token, the
// same in the form's field "csrf" and in the browser's cookie
// lnpdb_signin (__Host-… under TLS), set with the form: a double submit,
// which another site's form cannot make even in a browser that sends
// neither Origin nor Sec-Fetch-Site (login CSRF).
//
// A key holds at most [Config.MaxSessionsPerKey] sessions (8): signing in
// once more ends its oldest. The node holds at most [Config.MaxSessions]
// (100,000), a bound on memory: a sign-in past it ends the session unused
// the longest rather than being refused, since a refusal would let whoever
// holds enough keys keep every other customer out, while an eviction costs
// its holder one more sign-in.
//
// Sessions are kept in this process's memory, unless [Config.Store] keeps
// them where every node sees them (lnpdb serve does so when its accounts
// are in PostgreSQL: billing's table web_sessions). Then a session made on
// one node is served by any, and its end on one — sign-out, its key
// revoked here — is its end on every node at once; each request reads the
// store once and writes it at most once a minute (the session's last use),
// and MaxSessions does not apply (sessions idle past IdleTimeout are
// deleted at each sign-in). The CSRF token is derived from the cookie, so
// that no node needs to store it. In memory, a node's restart signs its
// browsers out, and several nodes behind one name need the web interface
// routed to one node (or by cookie); the console of a keys-file
// deployment, which has no store, is such a case.
package webui
