import { api, type AuditLog } from '../api'
import { LoadState, useLoad } from '../components'
import { href } from '../router'
import { AuditEntries } from './audit'

const LIMIT = 100

export function usePaymentActivity (id: string) {
  return useLoad(() => api<AuditLog>('/api/audit-log', { query: { resourceType: 'payment', resourceId: id, limit: LIMIT } }), [id])
}

/** Who acted on the payment (its audit entries: created, captured, refunded, canceled), newest first. */
export function PaymentActivity ({ id, activity }: { id: string, activity: ReturnType<typeof usePaymentActivity> }) {
  const rows = activity.data?.data ?? []
  return (
    <section aria-labelledby='activity'>
      <h2 id='activity'>Activity</h2>
      <LoadState loading={activity.loading && activity.data === undefined} error={activity.error} />
      {activity.data !== undefined && rows.length === 0 && <p>Nobody has acted on this payment yet.</p>}
      {rows.length > 0 && <AuditEntries entries={rows} here='/audit' resource={false} testId='activity' />}
      {activity.data?.hasMore === true && (
        <p>Only the newest {LIMIT} entries are shown: <a href={href('/audit', { resourceType: 'payment', resourceId: id })}>all of them in the audit log</a>.</p>
      )}
    </section>
  )
}
