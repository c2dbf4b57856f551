/** The OpenAPI document's top-level description: the policies a client developer needs. */
export const apiDescription = `
A product, payment and merchant HTTP JSON service.

## Error shapes
* **Products** (and infrastructure routes) answer errors with the simple envelope
  \`{ "error": "<message>", "code": "<CODE>" }\`. Codes: \`VALIDATION\`, \`INVALID_JSON\`, \`EMPTY_BODY\`,
  \`NOT_FOUND\`, \`METHOD_NOT_ALLOWED\`, \`PAYLOAD_TOO_LARGE\`, \`UNSUPPORTED_MEDIA_TYPE\`, \`RATE_LIMITED\`, \`INTERNAL\`.
* **Payments and merchants** answer errors with RFC 9457 problem documents (\`application/problem+json\`):
  \`type\`, \`title\`, \`status\`, \`detail\`, \`instance\` (the request path), \`traceId\` (the request id) and, for
  validation failures, \`errors\`: a map from JSON field name to messages.

Every response carries \`X-Request-Id\` (yours when it is 1-128 characters of \`A-Z a-z 0-9 . _ : -\`, else a new UUID).
A 500 never contains exception details; quote the request id to the operator instead.

## Limits
* Request bodies are limited to 64 KiB by default (\`BODY_LIMIT\`); larger bodies get 413.
* Each client IP may make 600 requests per minute by default (\`RATE_LIMIT_MAX\`, \`RATE_LIMIT_WINDOW_MS\`);
  beyond that, 429 with \`Retry-After\` (seconds) and \`x-ratelimit-*\` headers.
`.trim()
