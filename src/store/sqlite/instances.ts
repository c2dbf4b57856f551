import type { InstanceStore } from '../types'
import type { SqliteHandle } from './connection'
import type { WriteQueue } from './group-commit'

export function sqliteInstanceStore (db: SqliteHandle, writes: WriteQueue): InstanceStore {
  const beat = db.prepare(`INSERT INTO instances (id, started_at, heartbeat_at) VALUES (?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`)
  const remove = db.prepare('DELETE FROM instances WHERE id = ? OR heartbeat_at < ?')
  return {
    async beat (id, startedAt, now) { await writes.run(() => beat.run(id, startedAt, now)) },
    async remove (id, staleBefore) { await writes.run(() => remove.run(id, staleBefore)) }
  }
}
