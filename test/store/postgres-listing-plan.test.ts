/**
 * The listing indexes at scale: many payments on PostgreSQL, and the plan of
 * a page query (a merchant's newest payments after a cursor, with and without a
 * status filter) is one index range scan with no sort, reading about `limit + 1`
 * rows. The plans are printed as test comments (docs/payments.md, Listing, quotes them).
 */
import t from 'tap'
import { createPostgresDatabase } from '../../src/store/postgres'
import { ensurePostgres, freshSchema } from '../helpers/postgres'
import { itemAt } from '../helpers/items'

/** 200 000 by default (CI budget: the load dominates); LISTING_PLAN_ROWS=1000000 for the run docs/payments.md quotes. */
const ROWS = Number(process.env.LISTING_PLAN_ROWS ?? 200_000)

interface PlanNode { 'Node Type': string, 'Index Name'?: string, 'Actual Rows'?: number, Plans?: PlanNode[] }

function nodes (plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)]
}

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return
  t.test(`page queries over ${ROWS.toLocaleString('en')} payments use an index range scan, no sort`, async (t) => {
    const schema = await freshSchema(t)
    const db = await createPostgresDatabase(schema.url, { poolSize: 2 })
    t.teardown(async () => { await db.close() })
    const started = Date.now()
    // 1000 merchants, one payment per second from 2026-01-01, a status mix.
    await schema.query(`
      INSERT INTO payments (id, amount_minor, currency, status, created_at, updated_at, merchant_id)
      SELECT md5(i::text)::uuid::text, 100 + i % 1000, 'USD',
             (ARRAY['succeeded', 'succeeded', 'succeeded', 'declined', 'refunded'])[1 + i % 5],
             to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'merchant-' || (i % 1000)
      FROM generate_series(1, ${ROWS}) AS i`)
    await schema.query('ANALYZE payments')
    t.comment(`loaded ${ROWS} payments in ${Date.now() - started} ms`)

    const cursor = itemAt(await schema.query<{ id: string, created_at: string }>(`SELECT id, created_at FROM payments WHERE merchant_id = 'merchant-7' ORDER BY created_at DESC, id DESC OFFSET ${Math.floor(ROWS / 2000)} LIMIT 1`), 0)
    const queries = {
      'merchant page after a cursor': {
        text: 'SELECT * FROM payments WHERE merchant_id = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT $4',
        values: ['merchant-7', cursor.created_at, cursor.id, 11]
      },
      'merchant page with a status filter': {
        text: 'SELECT * FROM payments WHERE merchant_id = $1 AND status = $2 AND (created_at, id) < ($3, $4) ORDER BY created_at DESC, id DESC LIMIT $5',
        values: ['merchant-7', 'succeeded', cursor.created_at, cursor.id, 11]
      },
      'first page, all payments': {
        text: 'SELECT * FROM payments ORDER BY created_at DESC, id DESC LIMIT $1',
        values: [11]
      }
    }
    for (const [name, query] of Object.entries(queries)) {
      const row = itemAt(await schema.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode, 'Execution Time': number }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`, query.values), 0)
      const plan = itemAt(row['QUERY PLAN'], 0)
      const all = nodes(plan.Plan)
      t.notOk(all.some((node) => node['Node Type'] === 'Sort' || node['Node Type'] === 'Seq Scan'), `${name}: no sort, no sequential scan`)
      const scan = all.find((node) => node['Node Type'].startsWith('Index'))
      t.ok(scan, `${name}: an index scan (${scan?.['Index Name'] ?? 'none'})`)
      t.ok((scan?.['Actual Rows'] ?? Infinity) <= 11, `${name}: reads ${scan?.['Actual Rows'] ?? '?'} index entries`)
      const text = await schema.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query.text}`, query.values)
      t.comment(`${name} (${plan['Execution Time'].toFixed(3)} ms):\n${text.map((line) => line['QUERY PLAN']).join('\n')}`)
    }
    // The store's own query (through listPage) answers the same page.
    const page = await db.payments.list({ merchantId: 'merchant-7', limit: 10, startingAfter: cursor.id })
    t.equal(page.data.length, 10)
    t.ok(page.data.every((p) => p.merchantId === 'merchant-7' && p.createdAt < cursor.created_at))
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
