export function money (amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency, maximumFractionDigits: 20 }).format(amount)
  } catch {
    return `${amount} ${currency}`
  }
}

export function dateTime (iso: string | undefined): string {
  if (iso === undefined) return ''
  return new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' }) + ' UTC'
}

/** `YYYY-MM-DD` of a UTC day `days` before today. */
export function utcDay (daysAgo = 0): string {
  return new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10)
}

/** Statuses whose API name does not say it to a person: requires_action waits for the shopper, not for the merchant. */
const STATUS_LABELS: Record<string, string> = { requires_action: 'waiting for the shopper' }

export function statusLabel (status: string): string {
  return STATUS_LABELS[status] ?? status.replace(/_/g, ' ')
}

export function newKey (): string {
  return crypto.randomUUID()
}
