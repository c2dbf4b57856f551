import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parse } from 'yaml'

const CACHE_DIR = resolve(__dirname, '..', '..', 'node_modules', '.cache', 'openapi-document')

/**
 * The parsed OpenAPI document at `path`. Parsing the YAML costs each test process about a second, so the parse is kept
 * as JSON under node_modules/.cache, named by the hash of the text: a changed document is parsed again.
 */
export function readOpenApiDocument (path: string): unknown {
  const text = readFileSync(path, 'utf8')
  const cached = join(CACHE_DIR, `${createHash('sha256').update(text).digest('hex')}.json`)
  try {
    return JSON.parse(readFileSync(cached, 'utf8'))
  } catch {
    const document: unknown = parse(text)
    mkdirSync(CACHE_DIR, { recursive: true })
    // Written beside, then renamed: test processes running side by side never read half a file.
    const partial = `${cached}.${process.pid}`
    writeFileSync(partial, JSON.stringify(document))
    renameSync(partial, cached)
    return document
  }
}
