import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

// Issue 39 item 1: a PSP is one folder, src/gateway/<psp>/, listed in src/gateway/registry.ts; nothing else names it in
// code. Prose (descriptions, messages, OpenAPI examples) may name a PSP; code may not: an identifier, an import path,
// or a string that is exactly a PSP's type.

const root = join(__dirname, '..')
const FOLDERS = ['app', 'src', 'plugins', 'routes', 'schemas']
const PSP = /stripe|adyen/i
const PSP_TYPE = /^(stripe|adyen)$/i

function tsFiles (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? tsFiles(path) : entry.name.endsWith('.ts') ? [path] : []
  })
}

/** True inside an OpenAPI example: a member `example`/`examples`, or a constant whose name says it is one (`example…`, `…Example(s)`). */
function isExample (node: ts.Node): boolean {
  for (let at: ts.Node | undefined = node.parent; at !== undefined; at = at.parent) {
    if (ts.isPropertyAssignment(at) && /^examples?$/.test(at.name.getText())) return true
    if (ts.isVariableDeclaration(at) && /example/i.test(at.name.getText())) return true
  }
  return false
}

/** The code of `source` that names a PSP: identifiers, import and export paths, strings that are exactly a PSP's type. */
function pspNamesIn (source: ts.SourceFile): string[] {
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isIdentifier(node) || ts.isStringLiteralLike(node)) && isExample(node)) return
    if (ts.isIdentifier(node) && PSP.test(node.text)) found.push(node.text)
    else if (ts.isStringLiteralLike(node)) {
      const inModulePath = ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent) ||
        (ts.isCallExpression(node.parent) && node.parent.expression.getText(source) === 'require')
      if ((inModulePath && PSP.test(node.text)) || PSP_TYPE.test(node.text)) found.push(JSON.stringify(node.text))
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

function namingFiles (files: string[]): Map<string, string[]> {
  const naming = new Map<string, string[]>()
  for (const file of files) {
    const path = relative(root, file)
    if (path.startsWith('src/gateway/')) continue
    const names = pspNamesIn(ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true))
    if (names.length > 0) naming.set(path, names)
  }
  return naming
}

t.test('outside src/gateway/, no file names a PSP in code', async (t) => {
  const files = FOLDERS.flatMap((folder) => tsFiles(join(root, folder)))
  t.ok(files.length > 100, `${files.length} files checked`)
  const naming = [...namingFiles(files)].map(([path, names]) => `${path}: ${[...new Set(names)].join(', ')}`)
  t.same(naming, [], 'a PSP is named through the registry (src/gateway/registry.ts), not by name')
})

t.test('the check tells code from prose', async (t) => {
  const source = (code: string) => ts.createSourceFile('probe.ts', code, ts.ScriptTarget.Latest, true)
  t.same(pspNamesIn(source("const description = 'Stripe: a PaymentIntent id'\n// stripe\n")), [], 'prose and comments pass')
  t.same(pspNamesIn(source("const exampleConnector = { type: 'stripe' }\nconst s = { examples: [{ stripe: 'pm_card_visa' }] }\n")), [], 'and OpenAPI examples')
  t.same(pspNamesIn(source("import { x } from '../gateway/stripe/events'\nif (type === 'adyen') stripeThing()\n")),
    ['"../gateway/stripe/events"', '"adyen"', 'stripeThing'])
})
