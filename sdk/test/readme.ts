import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The package's directory: sdk/dist/test/ → ../.. */
const SDK = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

export const WALK_HEADING = '## The whole API in one walk'

/** The README's whole-API walk: the first ```ts block after its heading. */
export async function readmeWalk (): Promise<string> {
  const readme = await readFile(join(SDK, 'README.md'), 'utf8')
  const section = readme.indexOf(`\n${WALK_HEADING}\n`)
  if (section === -1) throw new Error(`README.md has no "${WALK_HEADING}" section`)
  const start = readme.indexOf('\n```ts\n', section)
  const end = readme.indexOf('\n```\n', start + 1)
  if (start === -1 || end === -1) throw new Error(`README.md's "${WALK_HEADING}" section has no ts block`)
  return readme.slice(start + '\n```ts\n'.length, end + 1)
}

/** examples/whole-api.ts as the README shows it: without its leading comment (about its tests), importing the package by name. */
export async function wholeApiAsInReadme (): Promise<string> {
  const source = await readFile(join(SDK, 'examples', 'whole-api.ts'), 'utf8')
  const lines = source.split('\n')
  const firstCode = lines.findIndex((line) => !line.startsWith('//'))
  return lines.slice(firstCode).join('\n').replace("from '../src/index.js'", "from '@product-payment-service/sdk'")
}

/** Every ```ts block of the README, in order (the walk among them): each must compile in an application. */
export async function readmeTsBlocks (): Promise<string[]> {
  const readme = await readFile(join(SDK, 'README.md'), 'utf8')
  return [...readme.matchAll(/\n```ts\n([\s\S]*?\n)```\n/g)].map((match) => match[1] ?? '')
}
