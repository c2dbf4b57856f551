import type { ConnectorRef } from '../domain/routing'

/** The part of the logger a summary writes to. */
interface SummaryLogger {
  debug?: (details: object, message: string) => void
  warn: (details: object, message: string) => void
}

/** One failed gateway call, as logged. */
export interface GatewayFailure {
  paymentId: string
  /** The failure's code (connection_refused, timeout, server_error, …). */
  code: string
  /** unknown: the charge may have been made; not_processed: certainly not. */
  kind: string
}

export interface FailureSummary {
  /** Logs the failure at debug at once; at warn, once per connector per interval, how many failed, the first and the last. */
  failed: (connector: ConnectorRef, failure: GatewayFailure) => void
  /** Writes the summaries still open (on shutdown, and in tests). */
  flush: () => void
}

interface Window {
  connector: ConnectorRef
  count: number
  first: GatewayFailure & { at: string }
  last: GatewayFailure & { at: string }
  timer: NodeJS.Timeout
}

/**
 * During a PSP outage every payment's call fails: one warn line per call would flood the log. Each failure is
 * logged at debug; the first failure on a connector opens a window of `intervalMs`, at whose end one warn line
 * says how many calls failed there, the first and the last failure.
 */
export function failureSummary (log: SummaryLogger, clock: () => number, intervalMs: number): FailureSummary {
  const windows = new Map<string, Window>()

  function close (key: string): void {
    const window = windows.get(key)
    if (window === undefined) return
    windows.delete(key)
    clearTimeout(window.timer)
    log.warn({
      connectorId: window.connector.id, connectorType: window.connector.type, failures: window.count, first: window.first, last: window.last, intervalMs
    }, 'gateway calls failed on this connector')
  }

  return {
    failed (connector, failure) {
      log.debug?.({ connectorId: connector.id, connectorType: connector.type, ...failure }, 'gateway call failed')
      const key = `${connector.type}:${connector.id ?? 'default'}`
      const stamped = { ...failure, at: new Date(clock()).toISOString() }
      const open = windows.get(key)
      if (open !== undefined) {
        open.count++
        open.last = stamped
        return
      }
      const timer = setTimeout(() => { close(key) }, intervalMs)
      timer.unref()
      windows.set(key, { connector, count: 1, first: stamped, last: stamped, timer })
    },
    flush () {
      for (const key of [...windows.keys()]) close(key)
    }
  }
}
