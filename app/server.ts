import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { buildApp, type App } from './app'
import { ConfigError, type Config } from '../src/config'
import { loadConfig } from '../src/load-config'

/** The signals that ask for a graceful stop (container runtimes and process managers send SIGTERM; Ctrl-C is SIGINT). */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const
/**
 * A stop signal this soon after the first is the same stop delivered twice, not an operator insisting:
 * npm forwards the signals it receives to the script, so a signal sent to the whole process group (Ctrl-C,
 * systemd's default KillMode=control-group) can reach node twice, a few milliseconds apart.
 */
const DUPLICATE_SIGNAL_MS = 1000
/**
 * Bytes pino hands to one write(2) of stdout. Its default (16 KiB) drains a log backlog under load
 * so slowly that the pending lines pile up in the heap (peak RSS 213 → 140 MB measured in the GET
 * benchmark with a larger one).
 */
const LOG_MAX_WRITE = 1024 * 1024

async function main (): Promise<void> {
  let config: Config
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`)
      process.exit(1)
    }
    throw err
  }

  const pretty = process.stdout.isTTY && config.LOG_LEVEL !== 'silent'
  const app = await buildApp(config, {
    logger: pretty
      ? { level: config.LOG_LEVEL, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:standard' } } }
      : { level: config.LOG_LEVEL, stream: pino.destination({ dest: 1, sync: false, maxWrite: LOG_MAX_WRITE }) }
  })

  await announceAdminKey(app, config)

  // close-with-grace drains and exits (0, or 1 after an error or past SHUTDOWN_GRACE_MS); the stop signals are
  // handled below so that a duplicate delivery does not turn a graceful stop into an immediate exit 1.
  let closing = false
  let stopSignal: NodeJS.Signals | undefined
  let firstStopAt = 0
  const shutdown = closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS, skip: [...STOP_SIGNALS] }, async ({ err }) => {
    closing = true
    if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal: stopSignal }, 'shutting down')
    await app.close()
  })
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (!closing) {
        stopSignal = signal
        firstStopAt = Date.now()
        shutdown.close()
      } else if (stopSignal === undefined || Date.now() - firstStopAt >= DUPLICATE_SIGNAL_MS) {
        // A second request to stop while draining: give up on the drain, as close-with-grace does.
        process.stderr.write(`second ${signal}, exiting\n`)
        process.exit(1)
      }
    })
  }

  await app.listen({ port: config.PORT, host: config.HOST })
  if (app.metrics.enabled) await app.metrics.listen()
}

/**
 * Without ADMIN_API_KEY (SQLite only; config refuses it with PostgreSQL): the first start of an
 * empty database generates the admin key, stores its SHA-256 and prints the key once, on stderr
 * rather than in the JSON log stream. Later starts only say that the generated key is in use.
 */
async function announceAdminKey (app: App, config: Config): Promise<void> {
  if (config.ADMIN_API_KEY !== undefined) return
  const secret = await app.apiKeys.bootstrapAdminKey()
  if (secret === undefined) {
    app.log.info('ADMIN_API_KEY is not set: the admin key generated on the first start of this database is in use')
    return
  }
  process.stderr.write([
    '',
    'No ADMIN_API_KEY is set, so an admin key was generated for this database. It is shown only now',
    '(the service stores its SHA-256, never the key):',
    '',
    `  ${secret}`,
    '',
    'Send it as `Authorization: Bearer <key>`. Setting ADMIN_API_KEY replaces it (the generated key then stops working).',
    '',
    ''
  ].join('\n'))
}

main().catch((err: unknown) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
