/**
 * SQL written once (docs/architecture.md): a statement both databases agree on lives in a shared store
 * module (src/store/*.ts, the `sql` tag), not once in sqlite/ and again in postgres/. This reads the
 * source of both dialect folders, takes every string that is an SQL statement naming a table, normalises
 * it and fails listing each text found in both.
 *
 * Normalised: placeholders (`?`, `@name`, `$n`) and every `${…}` interpolation become `?` (a file's own
 * string constants are spliced in first), a leading CTE member name (`f AS (…)`) is dropped, whitespace
 * collapsed, case folded.
 */
import t from 'tap'
import ts from 'typescript'
import { join } from 'node:path'
import { readdirSync, readFileSync } from 'node:fs'

const store = join(__dirname, '..', '..', 'src', 'store')

interface Found { file: string, line: number, text: string }

/** The statement's comparable form, or undefined when the string is no statement naming a table. */
function normalise (text: string): string | undefined {
  const flat = text
    .replace(/\$\d+/g, '?')
    .replace(/@[A-Za-z_]\w*/g, '?')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
    .replace(/^\w+ as \((.*)\)$/s, '$1')
    .trim()
  if (!/^(select|insert|update|delete|with)\b/.test(flat)) return undefined
  if (!/\b(from|into)\b/.test(flat) && !flat.startsWith('update ')) return undefined
  return flat
}

/** A template's text with `${…}` replaced: a file-level string constant by its text, anything else by `?`. */
function templateText (node: ts.TemplateExpression, constants: ReadonlyMap<string, string>, source: ts.SourceFile): string {
  let text = node.head.text
  for (const span of node.templateSpans) {
    const expression = span.expression.getText(source)
    text += (constants.get(expression) ?? '?') + span.literal.text
  }
  return text
}

/** Every SQL statement string of one source file. */
function statementsOf (file: string, code: string): Found[] {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true)
  const constants = new Map<string, string>()
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer
      if (ts.isIdentifier(declaration.name) && init !== undefined && (ts.isStringLiteral(init) || ts.isNoSubstitutionTemplateLiteral(init))) {
        constants.set(declaration.name.text, init.text)
      }
    }
  }
  const found: Found[] = []
  const visit = (node: ts.Node): void => {
    let text: string | undefined
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text
    else if (ts.isTemplateExpression(node)) text = templateText(node, constants, source)
    const normalised = text === undefined ? undefined : normalise(text)
    if (normalised !== undefined) {
      found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text: normalised })
      return
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

function folderStatements (folder: string): Found[] {
  return readdirSync(join(store, folder)).filter((name) => name.endsWith('.ts')).sort()
    .flatMap((name) => statementsOf(`${folder}/${name}`, readFileSync(join(store, folder, name), 'utf8')))
}

/** The normalised texts found in both lists, with where each side has them. */
function inBoth (sqlite: readonly Found[], postgres: readonly Found[]): Array<{ text: string, sqlite: Found[], postgres: Found[] }> {
  const pg = new Map<string, Found[]>()
  for (const statement of postgres) pg.set(statement.text, [...(pg.get(statement.text) ?? []), statement])
  const both = new Map<string, { text: string, sqlite: Found[], postgres: Found[] }>()
  for (const statement of sqlite) {
    const other = pg.get(statement.text)
    if (other === undefined) continue
    const entry = both.get(statement.text) ?? { text: statement.text, sqlite: [], postgres: other }
    entry.sqlite.push(statement)
    both.set(statement.text, entry)
  }
  return [...both.values()]
}

t.test('the extraction finds statements and judges them by their normalised text', async (t) => {
  const sqlite = statementsOf('a.ts', `
    const MATCH = 'id = @id'
    const a = db.prepare(\`SELECT * FROM payments WHERE \${MATCH} AND  status = 'pending'\`)
    const b = db.prepare('SELECT 1')
    const c = db.prepare(\`INSERT INTO events (\${COLUMNS.join(', ')}) VALUES (\${COLUMNS.map(() => '?').join(', ')})\`)`)
  const postgres = statementsOf('b.ts', `
    const a = { text: "select * from payments\\n  where id = $1 and status = 'pending'" }
    const b = 'SELECT 1'
    const c = \`ev AS (INSERT INTO events (\${EVENT_COLUMNS.join(', ')}) VALUES (\${p.list(values)}))\`
    const d = 'SELECT * FROM payments WHERE id = $1 FOR UPDATE'`)
  t.same(sqlite.map((found) => found.text), [
    "select * from payments where id = ? and status = 'pending'",
    'insert into events (?) values (?)'
  ], 'a statement naming no table (SELECT 1) is left out')
  t.same(inBoth(sqlite, postgres).map((entry) => entry.text), [
    "select * from payments where id = ? and status = 'pending'",
    'insert into events (?) values (?)'
  ], 'placeholders, whitespace, case and a CTE member\'s name do not count; FOR UPDATE does')
})

t.test('no SQL statement is written both in sqlite/ and in postgres/', async (t) => {
  const sqlite = folderStatements('sqlite')
  const postgres = folderStatements('postgres')
  t.ok(sqlite.length > 0 && postgres.length > 0, 'both folders have statements of their own')
  const both = inBoth(sqlite, postgres)
  const where = (list: Found[]): string => list.map((found) => `${found.file}:${found.line}`).join(', ')
  t.same(both.map((entry) => `${entry.text}\n    sqlite: ${where(entry.sqlite)}\n    postgres: ${where(entry.postgres)}`), [],
    `${both.length} statements are written in both dialect folders: move each to the shared store module of its area (src/store/sql.ts)`)
})
