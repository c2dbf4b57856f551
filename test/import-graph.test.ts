import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

// Imports run one way and form no cycle (issue 39 item 2). ESLint's import/no-cycle ignores `import type`, yet a
// type-only link still ties two modules' meanings together, so this graph counts every import and re-export.
const root = join(__dirname, '..')
const FOLDERS = ['app', 'src', 'plugins', 'routes', 'schemas']

function tsFiles (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? tsFiles(path) : entry.name.endsWith('.ts') ? [path] : []
  })
}

/** Each file's relative imports and re-exports (`import type` included), resolved to the files read. */
function importGraph (files: Map<string, string>): Map<string, string[]> {
  const resolveImport = (from: string, specifier: string): string | undefined => {
    if (!specifier.startsWith('.')) return undefined
    const base = resolve(dirname(from), specifier)
    return [`${base}.ts`, join(base, 'index.ts')].find((candidate) => files.has(candidate))
  }
  const graph = new Map<string, string[]>()
  for (const [file, code] of files) {
    const imports = ts.preProcessFile(code, true, true).importedFiles
      .map((imported) => resolveImport(file, imported.fileName))
      .filter((target): target is string => target !== undefined)
    graph.set(file, [...new Set(imports)])
  }
  return graph
}

/** Tarjan's strongly connected components: every component of more than one file (or a file importing itself) is a cycle. */
function cyclesOf (graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (node: string): void => {
    index.set(node, next)
    low.set(node, next)
    next++
    stack.push(node)
    onStack.add(node)
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0))
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string | undefined
    do {
      member = stack.pop()
      if (member === undefined) break
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return cycles
}

function projectFiles (): Map<string, string> {
  const files = FOLDERS.flatMap((folder) => tsFiles(join(root, folder)))
  return new Map(files.map((file) => [file, readFileSync(file, 'utf8')]))
}

t.test('no import cycle among the service\'s modules, type-only imports included', async (t) => {
  const files = projectFiles()
  t.ok(files.size > 150, `${files.size} files read`)
  const cycles = cyclesOf(importGraph(files)).map((cycle) => cycle.map((file) => relative(root, file)).join(' ⇄ '))
  t.same(cycles, [], cycles.join('\n'))
})

t.test('the cycle check finds a cycle made of type-only links and a self-import', async (t) => {
  const a = join(root, 'src/domain/a-probe.ts')
  const b = join(root, 'src/domain/b-probe.ts')
  const c = join(root, 'src/domain/c-probe.ts')
  const files = new Map([
    [a, "import type { B } from './b-probe'\nexport type A = B\n"],
    [b, "import { type A } from './a-probe'\nexport type B = A\n"],
    [c, "export * from './c-probe'\nimport { a } from '../domain/a-probe'\n"]
  ])
  t.same(cyclesOf(importGraph(files)).map((cycle) => cycle.map((file) => relative(root, file))), [
    ['src/domain/a-probe.ts', 'src/domain/b-probe.ts'],
    ['src/domain/c-probe.ts']
  ])
})

t.test('src/config.ts depends on nothing but its schema\'s library: everything may import the config object', async (t) => {
  const imports = ts.preProcessFile(readFileSync(join(root, 'src/config.ts'), 'utf8'), true, true).importedFiles.map((imported) => imported.fileName)
  t.same(imports, ['@sinclair/typebox'])
})
