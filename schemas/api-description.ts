/** The OpenAPI document's top-level description: the policies a client developer needs. */
export const apiDescription = `
A product, payment and merchant HTTP JSON service.

## Base URL
Paths start at the origin's root (\`/api/payments\`, \`/merchants\`, \`/products/{id}\`): the base URL is the origin
alone, with no path. The document's one server is \`/\`, the origin it is served from (Swagger UI calls that). A client
outside a browser has no such origin and passes it explicitly, e.g. \`baseUrl: 'https://payments.example.com'\` in
openapi-fetch or this repository's SDK, or \`http://127.0.0.1:3000\` against a local instance (the default \`PORT\`;
plain HTTP only there: production sits behind TLS).

## Authentication
Send an API key as \`Authorization: Bearer <key>\` (the **Authorize** button above). Two roles:
* the **admin key** (the operator's \`ADMIN_API_KEY\`) administers merchants, their API keys and the product catalogue;
* a **merchant key** (\`sk_…\`, from \`POST /merchants/{id}/api-keys\`, shown once) creates and reads that merchant's
  payments and reads and updates that merchant (not its \`status\`). The admin key does not act on a merchant's behalf:
  payment routes answer it 403.

\`GET /products/{id}\` and the health probes are public. A missing, malformed, unknown, revoked or expired key is 401 with
\`WWW-Authenticate: Bearer realm="product-payment-service"\` (plus \`error="invalid_token"\` when a key was sent); a valid
key without the right is 403; another merchant's merchant record, keys or payments are 404, as if they did not exist.
Keys are checked before the request body is read. A merchant may hold several keys (rotate: create, deploy, revoke);
a revoked key is refused from the next request on (by other instances within milliseconds; see \`revokeApiKey\`). Codes in the products envelope: \`UNAUTHENTICATED\`, \`FORBIDDEN\`.

## Versioning
Versions are date-named (\`2026-11-01\`, \`2026-11-25\` = current). Send \`Api-Version\` to choose one; without it a
merchant key's requests are answered in the merchant's pinned \`apiVersion\` (PATCH the merchant to upgrade), other
requests in the current version. Every response carries \`Api-Version\`; an unknown version is 400 listing the supported
ones. Webhook endpoints have their own \`apiVersion\` (receivers cannot send headers): since \`2026-11-25\` a delivery's
body is the Event resource, before it \`{type, timestamp, data, sequence}\`. Breaking changes (removing or renaming a field,
changing a type, status code or webhook body) come only with a new version; additive changes (new fields, endpoints,
event types) need none, so ignore members you do not know. This document says so too: the schemas of responses and
webhook bodies do not set \`additionalProperties: false\` (request bodies do: an unknown member is 400), so a client that
validates answers against it keeps working when a member is added. A version being retired is announced on its answers with
\`Deprecation\` (RFC 9745) and \`Sunset\` (RFC 8594), at least 6 months ahead.

## Error shapes
* **Products** (and infrastructure routes) answer errors with the simple envelope
  \`{ "error": "<message>", "code": "<CODE>" }\`. Codes: \`VALIDATION\`, \`INVALID_JSON\`, \`EMPTY_BODY\`,
  \`NOT_FOUND\`, \`METHOD_NOT_ALLOWED\`, \`PAYLOAD_TOO_LARGE\`, \`UNSUPPORTED_MEDIA_TYPE\`, \`RATE_LIMITED\`, \`INTERNAL\`.
* **Payments, merchants and connectors** answer errors with RFC 9457 problem documents (\`application/problem+json\`):
  \`type\`, \`title\`, \`status\`, \`detail\`, \`instance\` (the request path), \`traceId\` (the request id) and, for
  validation failures, \`errors\`: a map from JSON field name to messages.

Every response carries \`X-Request-Id\` (yours when it is 1-128 characters of \`A-Z a-z 0-9 . _ : -\`, else a new UUID).
A 500 never contains exception details; quote the request id to the operator instead.

Problem types specific to this service: \`urn:problem-type:payment-declined\` (402),
\`urn:problem-type:gateway-unavailable\` (503), \`urn:problem-type:idempotency-key-reused\` (409),
\`urn:problem-type:idempotency-key-in-use\` (409), \`urn:problem-type:merchant-email-taken\` (409),
\`urn:problem-type:webhook-delivery-in-flight\` (409),
\`urn:problem-type:service-unavailable\` (503), \`urn:problem-type:payment-failed\` (402),
\`urn:problem-type:refund-failed\` (402), \`urn:problem-type:payment-not-refundable\` (409),
\`urn:problem-type:payment-disputed\` (409), \`urn:problem-type:dispute-not-acceptable\` (409),
\`urn:problem-type:refund-exceeds-remaining\` (409), \`urn:problem-type:payment-not-cancelable\` (409),
\`urn:problem-type:payment-not-capturable\` (409), \`urn:problem-type:capture-failed\` (402),
\`urn:problem-type:connector-credentials-refused\` (400), \`urn:problem-type:connector-event-unverified\` (400),
\`urn:problem-type:connector-event-not-matched\` (503), \`urn:problem-type:totp-required\` (401),
\`urn:problem-type:sign-in-locked\` (429), \`urn:problem-type:user-email-taken\` (409), \`urn:problem-type:last-owner\` (409),
\`urn:problem-type:adyen-notification-unverified\` (401). Other problems use
the RFC 9110 section of their status code as \`type\`.

When the database is unavailable (restarting, unreachable, timed out, busy, or out of disk space) every route answers
503 with \`Retry-After\` (seconds) in its area's shape — problem \`urn:problem-type:service-unavailable\` for payments and
merchants, \`{ error, code: "STORE_UNAVAILABLE" }\` for products — never a 500. Nothing half-done is lost: retry after
\`Retry-After\` with the same Idempotency-Key and the request resumes where it stopped. (A full disk is a 503 too, not
WebDAV's 507: the client's remedy, retrying later, is the same.)

## Payments
* \`amount\` is a JSON number greater than 0 and at most 1000000000, with no more decimal places than the currency's
  ISO 4217 minor unit (USD 2, JPY 0, BHD 3, CLF 4). \`currency\` is an active ISO 4217 code in upper case. Amounts are
  stored as integer minor units and read back exactly as sent (10.1 stays 10.1). Every request amount (payment, refund,
  capture) may also be a decimal string, \`"10.10"\` (digits, optionally a point and digits), judged by the same rules and
  the same request as the number for an Idempotency-Key; responses carry numbers.
* States: \`pending\` → \`succeeded\` | \`declined\` | \`failed\` | \`canceled\`; \`succeeded\` → \`partially_refunded\` →
  \`refunded\` (or straight to \`refunded\`). \`declined\`, \`failed\`, \`canceled\` and \`refunded\` are terminal; no other
  move exists. A payment is \`pending\` only while the gateway has not answered (or was unreachable); the recovery worker
  retries it with exponential back-off and after \`PENDING_PAYMENT_MAX_AGE\` (default 24 h) settles it \`failed\`
  (\`failureCode\`), storing that final answer (402 \`payment-failed\`) on its Idempotency-Key.
* Refunds (\`POST /api/payments/{id}/refunds\`): full (no amount) or partial, several per payment, through the gateway
  under a key derived from the refund id. Serialised per payment: concurrent refunds never exceed the amount. An amount
  above what remains is 409 \`refund-exceeds-remaining\` (409, not 422: the remainder is the payment's current state,
  which other refunds change); a payment that is not \`succeeded\`/\`partially_refunded\` is 409 \`payment-not-refundable\`; one with a
  dispute that is not \`won\` is 409 \`payment-disputed\`.
* Lists (\`GET /api/payments\`, \`GET /api/payments/{id}/refunds\`, \`GET /merchants\`): \`{ data, hasMore }\`, newest first,
  \`limit\` 1-100 (default 10), cursors \`startingAfter\` / \`endingBefore\` (ids), which never skip or repeat an item.
* \`metadata\` (payments, refunds, merchants): up to 50 string values, keys ≤ 40 and values ≤ 500 characters;
  violations are 400 with \`errors.metadata\`. Part of the Idempotency-Key fingerprint.
* Outcomes: 201 \`succeeded\` with \`Location: /api/payments/{id}\`; 402 problem when declined (the payment is stored as
  \`declined\`, with \`paymentId\` and \`declineCode\`); 503 problem with \`Retry-After\` when the gateway is unavailable or
  times out (the payment is stored as \`pending\` and named by \`paymentId\`; a retry with the same Idempotency-Key resumes it,
  and a background recovery worker settles abandoned pending payments).
* \`GET /api/payments/{id}\` answers 404 for unknown ids and for ids that are not GUIDs (they cannot name a payment).

### Simulated gateway (the default, \`GATEWAY=simulated\`)
Deterministic outcomes by amount, after Braintree's sandbox — try them from this page:

| amount | outcome |
|---|---|
| 2000.00 – 2999.99 | declined, \`declineCode: card_declined\` → 402 |
| 5001.00 | gateway unavailable → 503, payment pending |
| 5002.00 | gateway time-out → 503, payment pending; the charge was in fact made, so a retry with the same key gets 201 |
| anything else | succeeded → 201 |

Refunds by refund amount: 4001.00 unavailable (503, refund pending), 4002.00 time-out (503; the refund was made, a
retry with the same key gets 201), 4003.00 refused (402 \`refund-failed\`), anything else succeeds. Cancel of a
pending payment voids its charge key; a charge that had gone through is refunded instead.

The simulator keeps its ledger in the service's database keyed by the downstream idempotency key (\`payment-{id}\`), so a
payment is never charged twice, across restarts too.

## Idempotency (\`Idempotency-Key\` header)
Every POST of the API (one rule, as Stripe's; each operation lists the header) accepts an optional \`Idempotency-Key\` of 1-255 printable ASCII characters
(use a UUID). Keys are scoped by merchant (or the admin), method and route: two merchants never share a key, and the same
route reached through a differently spelled URL (\`/api/pay%6Dents\`) finds the same key. On refunds the fingerprint covers the payment id too, so a key reused on another payment's
refunds is never a replay.
* The first request claims the key. Repeating it with the same body (compared canonically: key order and whitespace do not
  matter) replays the first response exactly — status, body, \`Location\` — with \`Idempotent-Replayed: true\`.
  Declines (402) are replayed too.
* The same key with a different body → 409 \`idempotency-key-reused\`. The same key while the first request is still
  running → 409 \`idempotency-key-in-use\` with \`Retry-After\`. No second payment and no second charge in either case.
* Requests rejected before any work (400 validation, 413, 415, 429) do not consume the key.
* After a 503 (gateway unavailable or time-out) the key is released but remembers its payment: retrying with the same key
  resumes the same payment and charges it under the same downstream key.
* A request that dies mid-way holds its key for the lock lease only (\`IDEMPOTENCY_LOCK_SECONDS\`, default 60 s); then a retry
  resumes it. Keys are retained for \`IDEMPOTENCY_TTL_HOURS\` (default 24 h) from their first use (replays do not extend
  it); afterwards the key may be used for a new request. Keys of payments still pending are never deleted.
* Answers that carry a secret (a new API key, a webhook endpoint's signing secret on creation or rotation) are replayed
  with the same secret: the copy kept with the key is encrypted like every stored secret (AES-256-GCM under
  \`ENCRYPTION_KEYS\`, bound to the key), never in clear, and is deleted with the key when it expires.
* Not client calls, so no key: the PSPs' notifications (deduplicated by the PSP's event id), the dashboard's sign-in, and
  the forms a shopper's browser posts at checkout (idempotent by their return token).

## HTTP semantics
Decisions behind the contract; each is enforced by a test.
* **Document.** OpenAPI 3.1, checked in CI by Spectral (\`spectral:oas\`), Spectral's OWASP API Security ruleset (waivers,
  each with its reason, in \`.spectral-owasp.yaml\`) and Redocly (\`recommended-strict\`), with no finding at all. Every
  operation has an \`operationId\`, HEAD is documented where served, every string and array has a bound, every error
  response has a realistic example, and the headers clients read are declared: \`X-Request-Id\` and \`Cache-Control\` (every
  answer), \`RateLimit\`/\`RateLimit-Policy\`, \`Location\` (201), \`Retry-After\` (429, 503), \`ETag\`, \`Idempotent-Replayed\`,
  \`Allow\` (405), \`WWW-Authenticate\` (401), \`Accept-Patch\`. Timestamps are quoted strings in the YAML.
* **Methods.** Every known resource path answers a method it does not serve with 405 and \`Allow\` (in the area's error
  shape), not 404; \`OPTIONS\` answers 204 with \`Allow\` (and \`Accept-Patch\` on merchants). 405 is documented on the real
  operations; OPTIONS and the refused methods are not pseudo-operations in the document.
* **Conditional requests (RFC 9110 §13).** Products have a strong \`ETag\` (a digest of the product): \`GET\`/\`HEAD\` with a
  matching \`If-None-Match\` (weak comparison, lists and \`*\`) is 304; \`If-Match\` that does not match (strong comparison) is
  412 on \`GET\` and \`PUT\`; \`If-Match: *\` on a product that does not exist is 412; \`If-None-Match: *\` on \`PUT\` creates only
  (412 when it exists). Merchants: \`If-None-Match\` on \`GET\` (304), \`If-Match\` on \`GET\` (412), \`If-Match\` and
  \`If-None-Match\` on \`PATCH\` (412), evaluated inside the patch's compare-and-set. \`PUT /products/{id}\` answers 200 also
  when it creates: a deliberate deviation from RFC 9110 §9.3.4 (which suggests 201), kept from the original contract.
  The product's preconditions are checked just before the write, not atomically with it (the product store has no
  version): two conditional writers racing within that window can both pass.
* **Caching.** \`Cache-Control: no-store\` on every answer (payments, refunds, keys, merchants, errors, probes), except a
  product read: \`public, max-age=0, must-revalidate\` (public catalogue data; a cache revalidates with the ETag every time,
  a cheap 304).
* **Request bodies.** JSON in UTF-8 only: a \`charset\` other than UTF-8 is 415; bytes that are not UTF-8 are 400 (never
  stored as U+FFFD); a \`Content-Encoding\` other than \`identity\` is 415 with \`Accept-Encoding: identity\` (bodies are small,
  \`BODY_LIMIT\`; decompression would need a second limit). A request with two \`Host\` headers, or an HTTP/1.1 request with
  none, is 400 in the area's shape.
* **Validation reports every field at once** (as ASP.NET's ValidationProblemDetails): schema errors (Ajv \`allErrors\`,
  one message per field) and domain errors (currency codes, decimal places, country codes, read-only fields, metadata)
  in one \`errors\` map. A duplicated JSON member: the last one counts, also for the decimal-places check
  (\`{"amount":1.234,"amount":1}\` is an amount of 1).
* **Idempotency-Key** sent twice is 400. The key may be sent bare (\`order-77\`) or as the structured-field string the
  IETF draft specifies (\`"order-77"\`): both name the same key.
* **Echoed input is bounded**: \`instance\` is at most 256 characters and \`detail\` quotes at most 80 characters of a path.
* **Product ids** \`.\` and \`..\` are 400: as path segments they mean "this" and "parent" and clients rewrite them.
* **Rate limiting** sends the IETF fields (draft-ietf-httpapi-ratelimit-headers): \`RateLimit-Policy: "default";q=600;w=60\`
  and \`RateLimit: "default";r=<remaining>;t=<seconds to reset>\`; \`X-RateLimit-Limit\`/\`-Remaining\`/\`-Reset\` stay for older
  clients; 429 carries \`Retry-After\`. The health probes are not rate limited.
* **CORS**: off by default. \`CORS_ORIGINS\` (comma-separated origins) lists the browser origins allowed to call the API
  (@fastify/cors); preflights need no key; no credentials mode (keys travel in \`Authorization\`, not cookies).
* **413 reaches the client.** A body over \`BODY_LIMIT\` (or any error answered before the body arrived) is answered, then
  the connection is closed in stages (lingering close, RFC 9112 §9.6): the rest of the body is read and discarded, at most
  16 MiB and 5 s (1 s idle), so the client reads the 413 instead of a connection reset.
* **Parser-level answers** (400 unparseable HTTP, 408, 414, 431) are written before any route runs; they carry the
  security headers, \`Cache-Control: no-store\` and an \`X-Request-Id\`, then close the connection. The body is a problem
  document for a request line naming \`/api/…\` or \`/merchants/…\`, the \`{ error, code }\` envelope otherwise (and when the
  request line is no longer at hand); HEAD gets no body.
* \`GET /\` points to the documentation (\`/docs\`, \`/docs/json\`, and \`Link\` relations \`service-doc\`/\`service-desc\`).

## Limits
* Request bodies are limited to 64 KiB by default (\`BODY_LIMIT\`); larger bodies get 413.
* Each API key (and the admin key) may make 600 requests per minute by default (\`RATE_LIMIT_MAX\`, \`RATE_LIMIT_WINDOW_MS\`);
  anonymous requests and refused keys count per client IP;
  beyond that, 429 with \`Retry-After\` (seconds); every counted answer carries \`RateLimit\` and \`RateLimit-Policy\` (see HTTP semantics).
* JSON bodies: \`__proto__\` and \`constructor.prototype\` members are invalid JSON (400); arrays and objects may nest at
  most 32 levels; text containing NUL or an unpaired UTF-16 surrogate cannot be stored and is a 400 naming the field.
  Other text is stored exactly as sent (no Unicode normalisation). A duplicated member: the last one counts, everywhere.
  A payment amount is judged by the digits written: \`10.100000000000000001\` has too many decimal places, even though a
  double rounds it to 10.1.
* Before any route, in the area's shape and with the connection closed: 414 when the request line alone exceeds 16 KiB,
  431 when the request line and headers do; 408 when they do not arrive within \`HEADERS_TIMEOUT_MS\` (10 s) or the whole request within \`REQUEST_TIMEOUT_MS\`
  (30 s); 400 for unparseable HTTP. A path that cannot be percent-decoded names no resource (products: 400, payments and
  merchants: 404).
`.trim()
