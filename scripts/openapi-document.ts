import { buildApp } from '../app/app'
import { loadConfig } from '../src/load-config'
import { quoteTimestamps } from '../schemas/openapi-contract'

/**
 * The environment the committed openapi.yaml is generated with: in-memory SQLite,
 * no logging and no background workers, so generating touches nothing on disk.
 */
export const OPENAPI_ENV: Record<string, string> = {
  DATABASE_URL: 'file::memory:',
  LOG_LEVEL: 'silent',
  REAPER_INTERVAL_MS: '0',
  RECOVERY_INTERVAL_MS: '0'
}

/** Builds the app and returns its OpenAPI document as YAML (what openapi.yaml must contain). */
export async function generateOpenApiYaml (): Promise<string> {
  const app = await buildApp(loadConfig(OPENAPI_ENV), { logger: false })
  try {
    return quoteTimestamps(app.swagger({ yaml: true }))
  } finally {
    await app.close()
  }
}
