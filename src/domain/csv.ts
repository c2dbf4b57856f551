/**
 * CSV as RFC 4180 writes it (issue 44's exports): fields separated by commas, records ended by CRLF, a field
 * quoted when it holds a comma, a double quote, CR or LF, and a double quote inside doubled. A text field a
 * spreadsheet would run as a formula (it starts with =, +, -, @, tab or CR: OWASP "CSV injection") is
 * prefixed with a single quote; numbers are written as they are.
 */
export type CsvValue = string | number | null | undefined

const FORMULA_START = /^[=+\-@\t\r]/
const NEEDS_QUOTES = /[",\r\n]/

export function csvField (value: CsvValue): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number') return String(value)
  const safe = FORMULA_START.test(value) ? `'${value}` : value
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

export function csvRecord (values: readonly CsvValue[]): string {
  return `${values.map(csvField).join(',')}\r\n`
}

/**
 * The CSV of every item a paged source yields, as text chunks: the header, then one chunk per page. Pages are
 * read one at a time, only when the consumer asks for more (a stream's backpressure), so memory holds one page
 * whatever the number of rows.
 */
export async function * csvChunks<T> (header: readonly string[], pages: AsyncIterable<readonly T[]>, row: (item: T) => readonly CsvValue[]): AsyncGenerator<string> {
  yield csvRecord(header)
  for await (const page of pages) {
    if (page.length > 0) yield page.map((item) => csvRecord(row(item))).join('')
  }
}

/** Every page of a cursor-paged list, newest first, fetched one after the other as they are consumed. */
export async function * allPages<T extends { id: string }> (list: (startingAfter: string | undefined) => Promise<{ data: T[], hasMore: boolean }>): AsyncGenerator<T[]> {
  let startingAfter: string | undefined
  for (;;) {
    const page = await list(startingAfter)
    yield page.data
    const last = page.data.at(-1)
    if (!page.hasMore || last === undefined) return
    startingAfter = last.id
  }
}
