import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

// The README and docs/*.md link to each other by relative path and heading anchor. Every such link must
// resolve: the file exists and, for a link into a Markdown file with #anchor, that file has a heading whose
// GitHub slug is the anchor. External links (http, https, mailto, any scheme) are not checked.
const ROOT = join(__dirname, '..', '..')
const README_MAX_BYTES = 25 * 1024

const docsFiles = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)
/** The files checked: the README, every document, and the other Markdown files that link into them. */
const checked = ['README.md', ...docsFiles, 'bench/RESULTS.md', 'sdk/README.md']

/** GitHub's heading slugs (github-slugger): lower case, punctuation dropped but hyphens, spaces to hyphens; repeats get -1, -2, … */
function slugger (): (heading: string) => string {
  const seen = new Map<string, number>()
  return (heading) => {
    const base = heading.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
    let slug = base
    let n = seen.get(base) ?? 0
    while (seen.has(slug)) slug = `${base}-${++n}`
    seen.set(base, n)
    seen.set(slug, 0)
    return slug
  }
}

/** A heading's text as GitHub renders it: links and images by their text, no HTML tags, no trailing #s. */
function headingText (raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
}

/** The lines outside fenced code blocks (``` or ~~~), with their line numbers. */
function proseLines (text: string): Array<{ line: string, number: number }> {
  const lines: Array<{ line: string, number: number }> = []
  let fence: string | undefined
  text.split('\n').forEach((line, i) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fence === undefined && opening?.[1] !== undefined) {
      fence = opening[1]
      return
    }
    if (fence !== undefined) {
      if (new RegExp(`^ {0,3}${fence[0]!}{${fence.length},}\\s*$`).test(line)) fence = undefined
      return
    }
    lines.push({ line, number: i + 1 })
  })
  return lines
}

/** The anchors of a Markdown text: its headings' slugs (ATX and setext) and any HTML id or name. */
function anchorsOf (text: string): Set<string> {
  const slug = slugger()
  const anchors = new Set<string>()
  let previous = ''
  for (const { line } of proseLines(text)) {
    const atx = /^ {0,3}#{1,6}\s+(.*)$/.exec(line)
    if (atx?.[1] !== undefined) anchors.add(slug(headingText(atx[1])))
    else if (/^ {0,3}(=+|-+)\s*$/.test(line) && previous.trim() !== '' && !/^\s*([-*+|>]|\d+[.)])\s/.test(previous)) {
      anchors.add(slug(headingText(previous)))
    }
    for (const html of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(html[1]!)
    previous = line
  }
  return anchors
}

interface Link { target: string, line: number }

/** The links of a Markdown text outside code: inline `[text](target)`, images, and reference definitions. */
function linksOf (text: string): Link[] {
  const links: Link[] = []
  for (const { line, number } of proseLines(text)) {
    const prose = line.replace(/(`+)[\s\S]*?(?<!`)\1(?!`)/g, '')
    for (const inline of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: inline[1]!, line: number })
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose)
    if (definition?.[1] !== undefined) links.push({ target: definition[1], line: number })
  }
  return links
}

const anchorCache = new Map<string, Set<string>>()
function anchorsOfFile (path: string): Set<string> {
  let anchors = anchorCache.get(path)
  if (anchors === undefined) anchorCache.set(path, anchors = anchorsOf(readFileSync(path, 'utf8')))
  return anchors
}

/** What is wrong with each relative link of `file` (repository-relative): a missing file or anchor. */
function brokenLinks (file: string, text: string): string[] {
  const broken: string[] = []
  for (const { target, line } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
    const hash = target.indexOf('#')
    const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash))
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1))
    const path = pathPart === '' ? join(ROOT, file) : join(ROOT, dirname(file), pathPart)
    const where = `${file}:${line} → ${target}`
    if (!existsSync(path)) {
      broken.push(`${where}: no such file ${relative(ROOT, path)}`)
      continue
    }
    if (anchor === undefined || anchor === '' || !path.endsWith('.md') || statSync(path).isDirectory()) continue
    const anchors = pathPart === '' ? anchorsOf(text) : anchorsOfFile(path)
    if (!anchors.has(anchor)) broken.push(`${where}: ${relative(ROOT, path)} has no heading #${anchor}`)
  }
  return broken
}

t.test('GitHub heading slugs', async (t) => {
  const slug = slugger()
  t.equal(slug('Keys: what is stored, rotation, revocation'), 'keys-what-is-stored-rotation-revocation')
  t.equal(slug('Customer-present payments (3-D Secure and redirects)'), 'customer-present-payments-3-d-secure-and-redirects')
  t.equal(slug('`Idempotency-Key` and the API'), 'idempotency-key-and-the-api')
  t.equal(slug('Tests'), 'tests')
  t.equal(slug('Tests'), 'tests-1', 'a repeated heading gets -1')
  t.equal(slug('Tests'), 'tests-2', 'and -2')
  t.equal(slug('Tests 1'), 'tests-1-1', 'a heading whose slug is taken by a repeat moves on')
  t.equal(slug('Deterministic simulation — seeds'), 'deterministic-simulation--seeds', 'a dropped character leaves its spaces')
})

t.test('the check finds broken links and ignores code and external links', async (t) => {
  const sample = [
    '# Title', '', '## Part', '', '## Part', '',
    '[ok](#part) [ok](#part-1) [ok](docs/api.md) [ok](docs/api.md#authentication) [ok](README.md#set-up)',
    '[external](https://example.com/nowhere) [mail](mailto:a@example.com) `[code](nowhere.md)`',
    '[gone](docs/nowhere.md) [no anchor](docs/api.md#nowhere) [no anchor here](#part-2)',
    '```', '[fenced](nowhere.md)', '```',
    '[ref]: docs/missing.md'
  ].join('\n')
  t.same(brokenLinks('README.md', sample).map((b) => b.replace(/:.*? → /, ' → ').replace(/:.*$/, '')), [
    'README.md → docs/nowhere.md',
    'README.md → docs/api.md#nowhere',
    'README.md → #part-2',
    'README.md → docs/missing.md'
  ])
})

t.test('every relative link in the README and docs/*.md resolves', async (t) => {
  let links = 0
  for (const file of checked) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    links += linksOf(text).length
    t.same(brokenLinks(file, text), [], `${file}: every relative link resolves`)
  }
  t.ok(links > 50, `the check saw the links (${links})`)
})

t.test('the README links to every document in docs/', async (t) => {
  const targets = new Set(linksOf(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((l) => l.target.replace(/#.*$/, '')))
  for (const file of docsFiles) t.ok(targets.has(file), `README.md links to ${file}`)
})

t.test(`the README is a guide read in one sitting: at most ${README_MAX_BYTES} bytes`, async (t) => {
  const size = statSync(join(ROOT, 'README.md')).size
  t.ok(size <= README_MAX_BYTES, `README.md is ${size} bytes`)
})
