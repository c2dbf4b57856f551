/**
 * The one config object's schema and type, and what reads its values: a leaf that everything may import. Loading
 * and checking it against the service's rules (API versions, key formats, ...) is src/load-config.ts, which only
 * the composition root, scripts and tests call.
 */
import { Type, type Static } from '@sinclair/typebox'

function StringEnum<const T extends string[]> (values: T, defaultValue: T[number]) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: values, default: defaultValue })
}

const Port = Type.Integer({ minimum: 0, maximum: 65535 })
const PositiveInt = Type.Integer({ minimum: 1 })

export const ConfigSchema = Type.Object({
  NODE_ENV: Type.String({ default: 'production' }),
  PORT: Type.Integer({ ...Port, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  LOG_LEVEL: StringEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  DATABASE_URL: Type.String({ pattern: '^(file:|postgres(ql)?://)', default: 'file:./data/service.db' }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  /** PostgreSQL: statement_timeout, and the client gives up 1 s later (a paused server); 0 disables. */
  DATABASE_QUERY_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 5000 }),
  /**
   * After a database failure, readiness turns 200 again only once the database has answered
   * without failure for this long (hysteresis: one change of state per outage).
   */
  DATABASE_SETTLE_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 2000 }),
  /** How often each instance writes its heartbeat (its idempotency locks are its own while it beats). */
  INSTANCE_HEARTBEAT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 1000 }),
  /**
   * An instance silent for this long has stopped: another instance takes over its idempotency
   * locks instead of answering 409 until IDEMPOTENCY_LOCK_SECONDS. At least 3 heartbeats.
   */
  INSTANCE_DEAD_AFTER_MS: Type.Integer({ minimum: 300, maximum: 600_000, default: 5000 }),
  SQLITE_SYNCHRONOUS: StringEnum(['FULL', 'NORMAL'], 'FULL'),
  BODY_LIMIT: Type.Integer({ minimum: 1024, maximum: 10 * 1024 * 1024, default: 64 * 1024 }),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 600 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  TRUST_PROXY: Type.String({ default: 'false' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** Prefix of every Redis key this service writes, so deployments (or test runs) sharing a Redis never collide. */
  REDIS_KEY_PREFIX: Type.String({ pattern: '^[\\x21-\\x7E]{1,100}$', default: 'product-payment-service:' }),
  /** The instance default for merchants without connector accounts; `none` refuses their payments (production). */
  GATEWAY: StringEnum(['simulated', 'none'], 'simulated'),
  GATEWAY_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 120_000, default: 5000 }),
  GATEWAY_SIM_LATENCY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 0 }),
  IDEMPOTENCY_LOCK_SECONDS: Type.Integer({ ...PositiveInt, default: 60 }),
  IDEMPOTENCY_TTL_HOURS: Type.Integer({ ...PositiveInt, default: 24 }),
  REAPER_INTERVAL_MS: Type.Integer({ minimum: 0, default: 60_000 }),
  RECOVERY_INTERVAL_MS: Type.Integer({ minimum: 0, default: 30_000 }),
  RECOVERY_AGE_SECONDS: Type.Integer({ ...PositiveInt, default: 120 }),
  /** Pending payments the recovery worker settles at once (each under its own lease). */
  RECOVERY_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  /** Seconds a payment may stay pending before the recovery worker settles it as failed (default 24 h). */
  PENDING_PAYMENT_MAX_AGE: Type.Integer({ ...PositiveInt, default: 86_400 }),
  /** Seconds a manual capture's authorization may wait for its capture (captureBefore); then the recovery worker voids it. 7 days. */
  AUTHORIZATION_TTL_SECONDS: Type.Integer({ minimum: 1, default: 604_800 }),
  /**
   * The URL at which shoppers' browsers reach this service (scheme, host, optional port and path prefix), e.g.
   * https://pay.example.com: PSPs send shoppers back to its return endpoint after authentication. Unset:
   * customer-present payments (returnUrl) are refused with 409 public-base-url-required.
   */
  PUBLIC_BASE_URL: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  /** Seconds a customer-present payment may wait for its shopper (requires_action); then the recovery worker cancels it (abandoned). */
  ACTION_TTL_SECONDS: Type.Integer({ minimum: 1, default: 3600 }),
  CONNECTION_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 30_000 }),
  /** Time for the whole header section to arrive (slowloris); at most REQUEST_TIMEOUT_MS. */
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 72_000 }),
  SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  /** Prometheus metrics on their own listener (never on the API port: they reveal business volume); unset: off. */
  METRICS_PORT: Type.Optional(Port),
  METRICS_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  /**
   * The operator (admin) credential, sent as `Authorization: Bearer <key>`. Checked below rather than
   * by the schema, so an error never echoes it. Required with PostgreSQL; on SQLite, when unset, a
   * key is generated on first start of an empty database (see docs/api.md, Authentication).
   */
  ADMIN_API_KEY: Type.Optional(Type.String()),
  /**
   * Keys that encrypt stored secrets (webhook signing secrets): `keyId:base64-of-32-bytes`, comma-separated; the
   * first encrypts, all decrypt. Checked below, never echoed. Required with PostgreSQL; on SQLite, when unset, a
   * key is generated on the first start and kept beside the database file (see docs/security.md, Secrets at rest).
   */
  ENCRYPTION_KEYS: Type.Optional(Type.String()),
  /**
   * How long an instance reuses a successful API key lookup (0: every request reads the database).
   * Revocations and suspensions clear it at once (on other instances through Redis, when configured).
   */
  AUTH_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 2000 }),
  /** API key lookups one instance keeps at most. */
  AUTH_CACHE_MAX_ENTRIES: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
  /**
   * How long an instance reuses a rendered product read (0: every read goes to the store). A write forgets it at
   * once (on other instances through Redis, when configured); without Redis this bounds how stale another instance's read may be.
   */
  PRODUCT_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  /** Rendered products one instance keeps at most. */
  PRODUCT_CACHE_MAX_ENTRIES: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
  /**
   * How long an instance reuses a merchant's enabled connector accounts for routing new payments (0: read on every
   * payment). A write through the connector accounts API forgets them at once (on other instances through Redis, when
   * configured); without Redis this bounds how long another instance may still route a new payment by the old accounts.
   */
  CONNECTOR_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  /**
   * Origins (`https://dashboard.example.com`, comma-separated) whose browser scripts may call the API (CORS).
   * Default: none — no cross-origin browser access; server-to-server clients are not affected by CORS.
   */
  CORS_ORIGINS: Type.String({ default: '' }),
  /** API versions being retired, `version=YYYY-MM-DD` (the day it stops being served), comma separated: answers in one carry Deprecation and Sunset. */
  API_VERSION_SUNSETS: Type.String({ default: '' }),
  /** Delays before the 2nd, 3rd, … webhook attempt (the Standard Webhooks schedule, about 28 h); units ms, s, m, h, d. */
  WEBHOOK_RETRY_DELAYS: Type.String({ default: '5s,5m,30m,2h,5h,10h,10h' }),
  /** Time-out of one webhook attempt (connect, headers and body). */
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 10_000 }),
  /** Development and tests only: lets webhook URLs use http and private, loopback and link-local addresses. */
  WEBHOOK_ALLOW_PRIVATE_URLS: Type.Boolean({ default: false }),
  /** How often each instance looks for due webhook deliveries (0: this instance sends none). */
  WEBHOOK_POLL_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  /** Deliveries one instance sends at once. */
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 16 }),
  /** Days events (and their deliveries) are kept; the reaper deletes older ones. */
  EVENT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** A dashboard session unused for this long ends (renewed by use, at most once a minute). */
  DASHBOARD_SESSION_IDLE_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 1800 }),
  /** A dashboard session ends this long after sign-in however much it is used. */
  DASHBOARD_SESSION_MAX_SECONDS: Type.Integer({ minimum: 60, maximum: 30 * 86_400, default: 43_200 }),
  /**
   * log2 of scrypt's N for users' passwords (issue 43): 16 is 64 MiB and ~0.1-0.2 s a hash; each step doubles both.
   * Lower only for tests. Stored hashes carry their own cost, so raising it never locks anyone out.
   */
  PASSWORD_HASH_COST: Type.Integer({ minimum: 10, maximum: 20, default: 16 })
})

export type Config = Static<typeof ConfigSchema> & {
  /**
   * The connector modules' base URL settings (each module's `urlSettings`: STRIPE_API_URL, …), by variable name: those
   * set or defaulted, each an http or https URL (src/load-config.ts checks them). A module reads its own.
   */
  readonly connectorUrls: Readonly<Record<string, string>>
  /** The URL settings that were read (set or not): a module whose settings are not among them was not given to loadConfig. */
  readonly connectorUrlNames: readonly string[]
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

export type EnvSource = Record<string, string | undefined>

/** The origins listed in CORS_ORIGINS. */
export function corsOrigins (value: string): string[] {
  return value.split(',').map((part) => part.trim()).filter((part) => part !== '')
}

/** TRUST_PROXY: "true"/"false", a hop count, or a comma-separated list of addresses/CIDRs. */
export function trustProxySetting (value: string): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (value === 'true') return true
  if (value === 'false') return false
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  return value.split(',').map((part) => part.trim()).filter(Boolean)
}
