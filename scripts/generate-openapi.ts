/**
 * Writes the OpenAPI document generated from the route schemas to openapi.yaml
 * (or to the path given as the first argument, e.g. for a drift check in CI).
 *
 *   npm run openapi                                     # → ./openapi.yaml
 *   node dist/scripts/generate-openapi.js /tmp/out.yaml
 */
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { generateOpenApiYaml } from './openapi-document'

async function main (): Promise<void> {
  const target = resolve(process.argv[2] ?? 'openapi.yaml')
  const yaml = await generateOpenApiYaml()
  writeFileSync(target, yaml)
  process.stdout.write(`wrote ${target}\n`)
}

main().catch((err: unknown) => {
  process.stderr.write(`generate-openapi: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
})
