import type { InstanceStore } from '../types'
import type { PgPool } from './connection'

/** Heartbeats, on their own connection (see index.ts): a saturated request pool never delays a beat. */
export function postgresInstanceStore (pool: PgPool): InstanceStore {
  return {
    async beat (id, startedAt, now) {
      await pool.query({
        name: 'instance-beat',
        text: `INSERT INTO instances (id, started_at, heartbeat_at) VALUES ($1, $2, $3)
          ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at`,
        values: [id, startedAt, now]
      })
    },
    async remove (id, staleBefore) {
      await pool.query({ name: 'instance-remove', text: 'DELETE FROM instances WHERE id = $1 OR heartbeat_at < $2', values: [id, staleBefore] })
    }
  }
}
