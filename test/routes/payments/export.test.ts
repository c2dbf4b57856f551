/** GET /api/payments/export (issue 44): the filtered list as RFC 4180 CSV, streamed in constant memory. */
import t from 'tap'
import { get } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildTestApp, merchantWithKey } from '../../helpers/app'
import { newPendingPayment } from '../../../src/domain/payments'
import { csvField, csvRecord } from '../../../src/domain/csv'
import { PAYMENT_CSV_HEADER } from '../../../schemas/payments'

t.test('csv fields: RFC 4180 quoting, CRLF records, formulas defused, numbers as they are', async (t) => {
  t.equal(csvField('plain'), 'plain')
  t.equal(csvField('a,b'), '"a,b"')
  t.equal(csvField('say "hi"'), '"say ""hi"""')
  t.equal(csvField('two\nlines'), '"two\nlines"')
  t.equal(csvField('=HYPERLINK("x")'), '"\'=HYPERLINK(""x"")"', 'a formula is text')
  t.equal(csvField('@SUM(A1)'), "'@SUM(A1)")
  t.equal(csvField(-5), '-5', 'a number is not a formula')
  t.equal(csvField(undefined), '')
  t.equal(csvField(null), '')
  t.equal(csvRecord(['a', 1, undefined, 'b']), 'a,1,,b\r\n')
})

t.test('the export: the list\'s filters, a header, one record per payment, newest first; bad filters are 400', async (t) => {
  const app = await buildTestApp(t)
  const create = async (body: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: '/api/payments', payload: body })
    t.equal(res.statusCode, 201)
    return res.json()
  }
  const jane = await create({ amount: 35, currency: 'USD', customer: { email: 'jane@example.com', name: 'Doe, "Jane"' }, metadata: { note: '=1+1' } })
  const other = await create({ amount: 12.5, currency: 'EUR' })
  const bob = await merchantWithKey(app)
  await app.inject({ method: 'POST', url: '/api/payments', headers: bob.auth, payload: { amount: 35, currency: 'USD' } })

  const all = await app.inject('/api/payments/export')
  t.equal(all.statusCode, 200)
  t.match(all.headers['content-type'], /^text\/csv; charset=utf-8/)
  t.match(all.headers['content-disposition'], /^attachment; filename="payments-\d{4}-\d{2}-\d{2}\.csv"$/)
  const records = all.body.split('\r\n')
  t.equal(records.at(-1), '', 'every record ends with CRLF')
  t.equal(records[0], PAYMENT_CSV_HEADER.join(','))
  t.equal(records.length, 4, 'the header and the merchant\'s own two payments')
  t.match(records[1], new RegExp(`^${other.id as string},[^,]+,succeeded,12.5,EUR,12.5,0,automatic,,,,card,visa,4242,12,2034,US,simulated,,ch_`), 'newest first')
  t.match(records[2], new RegExp(`^${jane.id as string},.*,jane@example.com,"Doe, ""Jane""",,card,visa,4242,.*,"{""note"":""=1\\+1""}"$`))

  const filtered = await app.inject('/api/payments/export?customerEmail=JANE%40example.com&amount=35&last4=4242&status=succeeded')
  t.same(filtered.body.split('\r\n').slice(1, -1).map((record) => record.split(',')[0]), [jane.id])
  const none = await app.inject('/api/payments/export?last4=0000')
  t.equal(none.body, `${PAYMENT_CSV_HEADER.join(',')}\r\n`, 'nothing selected: the header alone')

  for (const query of ['amount=0', 'last4=1', 'metadataKey=x', 'limit=5', 'createdGte=yesterday']) {
    const res = await app.inject(`/api/payments/export?${query}`)
    t.equal(res.statusCode, 400, query)
    t.match(res.headers['content-type'], /^application\/problem\+json/, query)
  }
  t.equal((await app.inject({ url: '/api/payments/export', headers: { authorization: undefined } })).statusCode, 401)
})

t.test('100,000 payments stream in constant memory: pages are read only as the client takes them', { timeout: 240_000 }, async (t) => {
  const app = await buildTestApp(t, {}, {}, { validateResponses: false })
  const merchant = await merchantWithKey(app)
  const TOTAL = 100_000
  const start = Date.parse('2026-01-01T00:00:00.000Z')
  for (let batch = 0; batch < TOTAL; batch += 1000) {
    await Promise.all(Array.from({ length: 1000 }, async (_, i) => {
      const n = batch + i
      const at = new Date(start + n * 1000).toISOString()
      const payment = newPendingPayment({ id: `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`, amountMinor: 1000 + n, currency: 'USD', at, merchantId: merchant.merchantId, customer: { email: `c${n}@example.com` } })
      await app.db.payments.create({ ...payment, status: 'succeeded', amountCapturedMinor: payment.amountMinor })
    }))
  }
  let pagesRead = 0
  const list = app.payments.list.bind(app.payments)
  app.payments.list = async (query) => { pagesRead++; return await list(query) }
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo

  const heapBefore = process.memoryUsage().heapUsed
  let peakHeap = heapBefore
  const result = await new Promise<{ records: number, bytes: number, paused: number[], last: string }>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/api/payments/export', headers: merchant.auth }, (res) => {
      t.equal(res.statusCode, 200)
      let records = 0
      let bytes = 0
      let tail = ''
      let paused: number[] | undefined
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        bytes += Buffer.byteLength(chunk)
        records += chunk.split('\n').length - 1
        tail = (tail + chunk).slice(-200)
        peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)
        if (paused === undefined && bytes > 100_000) {
          // The client stops reading: once the buffers between them are full, the server stops reading the database.
          // How long filling them takes depends on the machine's load, so wait until two reads half a second apart
          // agree (at most 30 s), then check the count stays still for one more second.
          const counts: number[] = []
          paused = counts
          res.pause()
          let previous = -1
          const settle = (waited: number): void => {
            if (pagesRead !== previous && waited < 30_000) {
              previous = pagesRead
              setTimeout(() => { settle(waited + 500) }, 500)
              return
            }
            counts.push(pagesRead)
            setTimeout(() => { counts.push(pagesRead); res.resume() }, 1000)
          }
          setTimeout(() => { settle(0) }, 500)
        }
      })
      res.on('end', () => { resolve({ records, bytes, paused: paused ?? [], last: tail.split('\r\n').at(-2) ?? '' }) })
      res.on('error', reject)
    }).on('error', reject)
  })
  t.equal(result.records, TOTAL + 1, 'the header and every payment')
  t.match(result.last, /^00000000-0000-7000-8000-000000000000,2026-01-01T00:00:00.000Z,succeeded,10,USD,10,0,automatic,c0@example.com,/, 'the oldest last')
  const [afterOne = -1, afterTwo = -2] = result.paused
  t.equal(afterTwo, afterOne, `while the client paused, the server stopped reading pages (${afterOne} read once the buffers were full, ${afterTwo} a second later)`)
  t.ok(afterTwo < TOTAL / 500 / 2, `only what the socket buffers hold was read ahead (${afterTwo} of ${TOTAL / 500} pages)`)
  t.equal(pagesRead, TOTAL / 500, 'then every page once')
  t.ok(peakHeap - heapBefore < 120 * 1024 * 1024, `the heap grew by ${Math.round((peakHeap - heapBefore) / 1048576)} MiB while ${Math.round(result.bytes / 1048576)} MiB of CSV went through (server and client in one process)`)
})

t.test('GET /api/refunds lists the merchant\'s refunds of all its payments; /api/refunds/export is their CSV', async (t) => {
  const app = await buildTestApp(t)
  const pay = async (headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers, payload: { amount: 20, currency: 'EUR' } })
    t.equal(res.statusCode, 201)
    return res.json().id as string
  }
  const refund = async (paymentId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers, payload: body })
    t.equal(res.statusCode, 201, res.body)
    return res.json().id as string
  }
  const [a, b] = [await pay(), await pay()]
  const r1 = await refund(a, { amount: 5, reason: 'damaged, "badly"' })
  const r2 = await refund(b, { amount: 2.5 })
  const bob = await merchantWithKey(app)
  await refund(await pay(bob.auth), { amount: 1 }, bob.auth)

  const list = await app.inject('/api/refunds')
  t.equal(list.statusCode, 200)
  t.same(list.json().data.map((r: { id: string }) => r.id), [r2, r1], 'newest first, not Bob\'s')
  t.match(list.json().data[1], { paymentId: a, amount: 5, currency: 'EUR', status: 'succeeded', reason: 'damaged, "badly"' })
  t.same((await app.inject('/api/refunds?limit=1&startingAfter=' + r2)).json().data.map((r: { id: string }) => r.id), [r1])
  t.same((await app.inject('/api/refunds?status=pending')).json().data, [])
  t.equal((await app.inject('/api/refunds?status=maybe')).statusCode, 400)
  t.equal((await app.inject('/api/refunds?startingAfter=00000000-0000-4000-8000-000000000000')).statusCode, 400, 'an unknown cursor')

  const csv = await app.inject('/api/refunds/export')
  t.equal(csv.statusCode, 200)
  t.match(csv.headers['content-disposition'], /^attachment; filename="refunds-\d{4}-\d{2}-\d{2}\.csv"$/)
  const records = csv.body.split('\r\n')
  t.equal(records[0], 'id,payment_id,created_at,updated_at,status,amount,currency,reason,failure_code,metadata')
  t.match(records[1], new RegExp(`^${r2},${b},[^,]+,[^,]+,succeeded,2.5,EUR,,,$`))
  t.match(records[2], new RegExp(`^${r1},${a},[^,]+,[^,]+,succeeded,5,EUR,"damaged, ""badly""",,$`))
  t.equal(records.length, 4)
  t.equal((await app.inject('/api/refunds/export?limit=3')).statusCode, 400, 'no paging on the export')
})
