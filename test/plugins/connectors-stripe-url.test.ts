import t from 'tap'
import { buildTestApp } from '../helpers/app'
import { spyGateway } from '../helpers/gateway'

interface LogLine { level: number, msg: string, stripeApiUrl?: string }

function capture (): { lines: LogLine[], logger: { level: string, stream: { write: (line: string) => void } } } {
  const lines: LogLine[] = []
  return { lines, logger: { level: 'warn', stream: { write: (line) => { lines.push(JSON.parse(line) as LogLine) } } } }
}

t.test('a STRIPE_API_URL that is not Stripe\'s is logged once, as a warning, at start', async (t) => {
  const { lines, logger } = capture()
  await buildTestApp(t, { STRIPE_API_URL: 'http://127.0.0.1:12111' }, { gateway: spyGateway(), logger })
  t.match(lines.filter((line) => line.msg.includes('STRIPE_API_URL')), [{ level: 40, stripeApiUrl: 'http://127.0.0.1:12111' }])
})

t.test('Stripe\'s own API is not worth a warning', async (t) => {
  const { lines, logger } = capture()
  await buildTestApp(t, {}, { gateway: spyGateway(), logger })
  t.same(lines.filter((line) => line.msg.includes('STRIPE_API_URL')), [])
})
