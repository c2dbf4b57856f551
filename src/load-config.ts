import { isIP, isIPv4 } from 'node:net'
import { envSchema } from 'env-schema'
import { ConfigError, ConfigSchema, corsOrigins, trustProxySetting, type Config, type EnvSource } from './config'
import { ADMIN_KEY_MIN_LENGTH } from './domain/api-keys'
import { parseRetryDelays } from './domain/webhooks'
import { API_VERSIONS, parseSunsets } from './domain/api-versions'
import { parseEncryptionKeys } from './secrets/encryption'
import type { ConnectorUrlSetting } from './gateway/connector'
import { BUILT_IN_CONNECTORS } from './gateway/registry'

/** Every variable the service reads: the config schema's and the connector modules' URL settings. */
export function configVariableNames (modules: readonly ConfiguredModule[] = BUILT_IN_CONNECTORS): string[] {
  return [...Object.keys(ConfigSchema.properties), ...urlSettingNames(modules)]
}

function urlSettingNames (modules: readonly ConfiguredModule[]): string[] {
  return modules.flatMap((module) => (module.urlSettings ?? []).map(({ name }) => name))
}

/** What a module brings to the configuration: its base URL settings. */
interface ConfiguredModule { urlSettings?: readonly ConnectorUrlSetting[] | undefined }

/**
 * The only place that reads the environment. Tests pass their own `source`
 * instead of touching process.env. `modules`: whose URL settings are read (the built-in connector modules).
 */
export function loadConfig (source: EnvSource = process.env, modules: readonly ConfiguredModule[] = BUILT_IN_CONNECTORS): Config {
  const data: Record<string, string> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = source[key]
    if (value !== undefined && value !== '') data[key] = value
  }
  let config: Config
  try {
    config = { ...envSchema<Omit<Config, 'connectorUrls'>>({ schema: ConfigSchema, data, env: false, dotenv: false }), connectorUrls: connectorUrlsOf(source, modules), connectorUrlNames: urlSettingNames(modules) }
  } catch (err) {
    if (err instanceof ConfigError) throw err
    throw new ConfigError(describeEnvError(err as Error & { errors?: AjvLikeError[] }, data))
  }
  if (config.REQUEST_TIMEOUT_MS > 0 && config.HEADERS_TIMEOUT_MS > config.REQUEST_TIMEOUT_MS) {
    // Node refuses a header time-out longer than the request time-out; the default follows a shorter REQUEST_TIMEOUT_MS.
    if (data.HEADERS_TIMEOUT_MS !== undefined) {
      throw new ConfigError(`invalid configuration: HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (got ${config.HEADERS_TIMEOUT_MS} > ${config.REQUEST_TIMEOUT_MS})`)
    }
    config.HEADERS_TIMEOUT_MS = config.REQUEST_TIMEOUT_MS
  }
  if (parseSunsets(config.API_VERSION_SUNSETS) === undefined) {
    throw new ConfigError('invalid configuration: API_VERSION_SUNSETS must be comma-separated version=YYYY-MM-DD pairs naming supported versions ' +
      `other than the current one (${API_VERSIONS.join(', ')}) (got ${JSON.stringify(config.API_VERSION_SUNSETS)})`)
  }
  if (parseRetryDelays(config.WEBHOOK_RETRY_DELAYS) === undefined) {
    throw new ConfigError('invalid configuration: WEBHOOK_RETRY_DELAYS must be 1-20 comma-separated durations such as 5s,5m,2h ' +
      `(units ms, s, m, h, d; each at most 7d) (got ${JSON.stringify(config.WEBHOOK_RETRY_DELAYS)})`)
  }
  if (config.INSTANCE_DEAD_AFTER_MS < 3 * config.INSTANCE_HEARTBEAT_MS) {
    throw new ConfigError('invalid configuration: INSTANCE_DEAD_AFTER_MS must be at least 3 × INSTANCE_HEARTBEAT_MS, so that one slow ' +
      `heartbeat never makes a live instance look stopped (got ${config.INSTANCE_DEAD_AFTER_MS} and ${config.INSTANCE_HEARTBEAT_MS})`)
  }
  const adminKeyProblem = checkAdminApiKey(config)
  if (adminKeyProblem !== undefined) throw new ConfigError(`invalid configuration: ${adminKeyProblem}`)
  const encryptionKeysProblem = checkEncryptionKeys(config)
  if (encryptionKeysProblem !== undefined) throw new ConfigError(`invalid configuration: ${encryptionKeysProblem}`)
  if (!isValidTrustProxy(config.TRUST_PROXY)) {
    throw new ConfigError('invalid configuration: TRUST_PROXY must be true, false, a hop count or a comma-separated ' +
      `list of addresses, CIDRs or loopback/linklocal/uniquelocal (got ${JSON.stringify(config.TRUST_PROXY)})`)
  }
  if (config.PUBLIC_BASE_URL !== undefined && !isPublicBaseUrl(config.PUBLIC_BASE_URL)) {
    throw new ConfigError('invalid configuration: PUBLIC_BASE_URL must be an http or https URL without query, fragment or credentials, ' +
      `e.g. https://pay.example.com (got ${JSON.stringify(config.PUBLIC_BASE_URL)})`)
  }
  const badOrigin = corsOrigins(config.CORS_ORIGINS).find((origin) => !isOrigin(origin))
  if (badOrigin !== undefined) {
    throw new ConfigError('invalid configuration: CORS_ORIGINS must be a comma-separated list of origins such as ' +
      `https://dashboard.example.com (scheme, host, optional port; no path) (got ${JSON.stringify(badOrigin)})`)
  }
  return config
}

/**
 * The modules' base URL settings: each set (or defaulted) one, checked to be an http or https URL. Operator
 * configuration, not merchant input: loopback and plain http are accepted (tests, local fakes).
 */
function connectorUrlsOf (source: EnvSource, modules: readonly ConfiguredModule[]): Record<string, string> {
  const urls: Record<string, string> = {}
  for (const setting of modules.flatMap((module) => module.urlSettings ?? [])) {
    const set = source[setting.name]
    const value = set === undefined || set === '' ? setting.default : set
    if (value === undefined) continue
    if (!isHttpUrl(value)) throw new ConfigError(`invalid configuration: ${setting.name} must be an http or https URL (got ${JSON.stringify(value)})`)
    urls[setting.name] = value
  }
  return urls
}

function isPublicBaseUrl (value: string): boolean {
  if (!isHttpUrl(value)) return false
  const url = new URL(value)
  return url.search === '' && url.hash === '' && url.username === '' && url.password === '' && !value.includes('?') && !value.includes('#')
}

function isHttpUrl (value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

function isOrigin (value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value
  } catch {
    return false
  }
}

/** RFC 6750 b64token characters, so the key travels in `Authorization: Bearer` unchanged. */
const ADMIN_KEY_PATTERN = /^[A-Za-z0-9._~+/=-]+$/
const ADMIN_KEY_MAX_LENGTH = 512

/** What is wrong with ADMIN_API_KEY, never quoting it (it is a secret). */
function checkAdminApiKey (config: Config): string | undefined {
  const key = config.ADMIN_API_KEY
  if (key === undefined) {
    return config.DATABASE_URL.startsWith('file:')
      ? undefined
      : 'ADMIN_API_KEY is required with PostgreSQL (at least 32 characters, e.g. the output of `openssl rand -base64 32`); ' +
        'only the embedded SQLite database generates an admin key on first start'
  }
  if (key.length < ADMIN_KEY_MIN_LENGTH || key.length > ADMIN_KEY_MAX_LENGTH) {
    return `ADMIN_API_KEY must be ${ADMIN_KEY_MIN_LENGTH} to ${ADMIN_KEY_MAX_LENGTH} characters long (got ${key.length}); ` +
      'generate one with `openssl rand -base64 32`'
  }
  if (!ADMIN_KEY_PATTERN.test(key)) {
    return 'ADMIN_API_KEY may only contain letters, digits and - . _ ~ + / = (the characters of a Bearer token)'
  }
  return undefined
}

/** What is wrong with ENCRYPTION_KEYS, never quoting a key. */
function checkEncryptionKeys (config: Config): string | undefined {
  if (config.ENCRYPTION_KEYS === undefined) {
    return config.DATABASE_URL.startsWith('file:')
      ? undefined
      : 'ENCRYPTION_KEYS is required with PostgreSQL (keyId:base64-of-32-bytes, comma-separated, e.g. k1:$(openssl rand -base64 32)); ' +
        'only the embedded SQLite database generates a key on first start'
  }
  const keys = parseEncryptionKeys(config.ENCRYPTION_KEYS)
  return typeof keys === 'string' ? keys : undefined
}

interface AjvLikeError { instancePath: string, message?: string, params?: Record<string, unknown> }

function describeEnvError (err: Error & { errors?: AjvLikeError[] }, data: Record<string, string>): string {
  const first = err.errors?.[0]
  if (first === undefined) return `invalid configuration: ${err.message}`
  const variable = first.instancePath.replace(/^\//, '')
  const got = variable in data ? ` (got ${JSON.stringify(data[variable])})` : ''
  const reason = first.message ?? 'is invalid'
  if (first.params?.allowedValues !== undefined) {
    return `invalid configuration: ${variable} must be one of ${(first.params.allowedValues as unknown[]).join(', ')}${got}`
  }
  return `invalid configuration: ${variable} ${reason}${got}`
}

const NAMED_PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/** Rejects what Fastify's proxy-addr would throw on at startup, so the error names the variable. */
function isValidTrustProxy (value: string): boolean {
  const setting = trustProxySetting(value)
  if (!Array.isArray(setting)) return true
  return setting.length > 0 && setting.every((entry) => {
    if (NAMED_PROXY_RANGES.has(entry)) return true
    const [address = '', range, ...rest] = entry.split('/')
    const family = isIP(address)
    if (family === 0 || rest.length > 0) return false
    if (range === undefined) return true
    if (/^\d+$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128)
    return family === 4 && isIPv4(range)
  })
}
