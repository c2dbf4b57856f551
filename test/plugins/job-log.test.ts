import t from 'tap'
import type { FastifyBaseLogger } from 'fastify'
import { StoreUnavailableError } from '../../src/domain/errors'
import { backgroundJobLog } from '../../plugins/job-log'

function recordingLog (): { log: FastifyBaseLogger, lines: Array<{ level: string, msg: string }> } {
  const lines: Array<{ level: string, msg: string }> = []
  const at = (level: string) => (_fields: unknown, msg: string) => { lines.push({ level, msg }) }
  return { log: { error: at('error'), warn: at('warn'), info: at('info') } as unknown as FastifyBaseLogger, lines }
}

t.test('a job failing because the database is away logs once when it pauses and once when it runs again; a bug every time', async (t) => {
  const { log, lines } = recordingLog()
  const report = backgroundJobLog(log, 'recovery')
  const away = new StoreUnavailableError('The database is unreachable right now. Retry … with the same Idempotency-Key.', 'unreachable', 2)
  report.succeeded()
  for (let poll = 0; poll < 20; poll++) report.failed(away)
  report.succeeded()
  report.succeeded()
  report.failed(new Error('a bug'))
  report.failed(new Error('a bug'))
  t.same(lines, [
    { level: 'warn', msg: 'background job paused: the database is unavailable; it retries every interval' },
    { level: 'info', msg: 'background job running again' },
    { level: 'error', msg: 'background job failed' },
    { level: 'error', msg: 'background job failed' }
  ])
})
