import type { AuditEntry } from '../domain/audit'
import { NotFoundError } from '../domain/errors'
import { isGuid } from '../domain/ids'
import { merchantNotFoundMessage } from '../domain/merchants'
import type { CreatedRange, Page, PageRequest } from '../domain/pagination'
import type { Database } from '../store/types'

export interface AuditLogFilter extends PageRequest, CreatedRange {
  actorId?: string
  action?: string
  resourceType?: string
  resourceId?: string
}

export interface AuditLogService {
  /** A merchant's entries, newest first; NotFoundError for an unknown merchant. */
  list: (filter: AuditLogFilter, merchantId: string) => Promise<Page<AuditEntry>>
}

/** Reading the audit log (issue 43). Writing is the stores' part: each change writes its entry in its own transaction. */
export function auditLogService (deps: { db: Pick<Database, 'auditLog' | 'merchants'> }): AuditLogService {
  return {
    async list (filter, merchantId) {
      const merchant = isGuid(merchantId) ? await deps.db.merchants.get(merchantId.toLowerCase()) : undefined
      if (merchant === undefined) throw new NotFoundError(merchantNotFoundMessage(merchantId))
      return await deps.db.auditLog.list({ ...filter, merchantId: merchant.id })
    }
  }
}
