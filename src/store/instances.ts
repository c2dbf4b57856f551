import { sql, type SqlRunner } from './sql'
import type { InstanceStore } from './types'

export const instanceSql = {
  beat: sql<{ id: string, startedAt: number, now: number }>('instance-beat')`
    INSERT INTO instances (id, started_at, heartbeat_at) VALUES (${'id'}, ${'startedAt'}, ${'now'})
    ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
  remove: sql<{ id: string, staleBefore: number }>('instance-remove')`DELETE FROM instances WHERE id = ${'id'} OR heartbeat_at < ${'staleBefore'}`,
  heartbeat: sql<{ id: string }, { heartbeat_at: number | string }>('instance-heartbeat')`SELECT heartbeat_at FROM instances WHERE id = ${'id'}`
}

/**
 * Heartbeats, the same on both databases: each one write statement (SQLite: in the group commit;
 * PostgreSQL: on the heartbeat's own connection, see postgres/index.ts).
 */
export function instanceStore (db: SqlRunner): InstanceStore {
  return {
    async beat (id, startedAt, now) { await db.write(instanceSql.beat, { id, startedAt, now }) },
    async remove (id, staleBefore) { await db.write(instanceSql.remove, { id, staleBefore }) }
  }
}
