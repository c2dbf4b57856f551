/**
 * Who paid and with what (issue 44): the customer a merchant names when creating a payment, and the
 * payment method details a connector's answer carries. Only these members are ever kept: no card
 * number, no CVC, no holder name, no billing address.
 */

export const CUSTOMER_EMAIL_MAX_LENGTH = 254
export const CUSTOMER_NAME_MAX_LENGTH = 200
export const CUSTOMER_REFERENCE_MAX_LENGTH = 256

export interface Customer {
  /** As the merchant sent it; searched case-insensitively. */
  email: string
  name?: string
  /** The merchant's own id of the customer. */
  reference?: string
}

export interface CardDetails {
  /** visa, mastercard, amex, … (lower case, as the connector names it). */
  brand: string
  last4: string
  expMonth?: number
  expYear?: number
  /** ISO 3166-1 alpha-2 of the issuer, when the connector says. */
  country?: string
}

export interface PaymentMethodDetails {
  /** card, or the connector's name of the method (sepadirect_debit, ideal, …). */
  type: string
  card?: CardDetails
}

/** The form an email is searched by: trimmed, lower case. */
export function normalizedEmail (email: string): string {
  return email.trim().toLowerCase()
}

const LAST4 = /^[0-9]{4}$/
const TYPE = /^[a-z0-9_]{1,64}$/
const COUNTRY = /^[A-Z]{2}$/

function text (value: unknown, pattern: RegExp): string | undefined {
  return typeof value === 'string' && pattern.test(value) ? value : undefined
}

function integerIn (value: unknown, min: number, max: number): number | undefined {
  const number = typeof value === 'string' && /^[0-9]{1,4}$/.test(value) ? Number(value) : value
  return typeof number === 'number' && Number.isInteger(number) && number >= min && number <= max ? number : undefined
}

/**
 * The details a connector's answer carries, kept to the members above and to plausible values (anything
 * else is dropped, never stored): undefined when not even the method's type is known.
 */
export function paymentMethodDetailsOf (raw: { type?: unknown, card?: { brand?: unknown, last4?: unknown, expMonth?: unknown, expYear?: unknown, country?: unknown } | null }): PaymentMethodDetails | undefined {
  const type = text(typeof raw.type === 'string' ? raw.type.toLowerCase() : raw.type, TYPE)
  if (type === undefined) return undefined
  const card = raw.card ?? undefined
  const brand = text(typeof card?.brand === 'string' ? card.brand.toLowerCase() : undefined, TYPE)
  const last4 = text(card?.last4, LAST4)
  if (card === undefined || brand === undefined || last4 === undefined) return { type }
  const expMonth = integerIn(card.expMonth, 1, 12)
  const expYear = integerIn(card.expYear, 2000, 2100)
  const country = text(typeof card.country === 'string' ? card.country.toUpperCase() : undefined, COUNTRY)
  return {
    type,
    card: {
      brand,
      last4,
      ...(expMonth !== undefined ? { expMonth } : {}),
      ...(expYear !== undefined ? { expYear } : {}),
      ...(country !== undefined ? { country } : {})
    }
  }
}
