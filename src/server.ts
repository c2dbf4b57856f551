import closeWithGrace from 'close-with-grace'
import { buildApp } from './app'
import { ConfigError, loadConfig, type Config } from './config'

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
      : { level: config.LOG_LEVEL }
  })

  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
  })

  await app.listen({ port: config.PORT, host: config.HOST })
}

main().catch((err: unknown) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
