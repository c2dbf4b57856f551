import { BlockList, isIP } from 'node:net'
import { WEBHOOK_URL_MAX_LENGTH } from '../domain/webhooks'

/**
 * SSRF rules for webhook URLs: only public unicast addresses may receive deliveries.
 * Checked at registration (the URL, and what its name resolves to then) and again
 * for every connection after DNS resolution (src/webhooks/client.ts), so a name
 * that later resolves to a private address (DNS rebinding) is refused too.
 */
const blocked = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]
] as const) blocked.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 96], ['::1', 128], ['64:ff9b:1::', 48], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['100::', 64], ['2001:db8::', 32],
  ['2001::', 23], ['2002::', 16]
] as const) blocked.addSubnet(network, prefix, 'ipv6')

/** IPv4 addresses embedded in IPv6 forms (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96) are judged as IPv4. */
function embeddedIPv4 (address: string): string | undefined {
  const lower = address.toLowerCase()
  const [, dotted] = /^(?:::ffff:(?:0:)?|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower) ?? []
  if (dotted !== undefined) return dotted
  const [, highHex, lowHex] = /^(?:::ffff:(?:0:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower) ?? []
  if (highHex === undefined || lowHex === undefined) return undefined
  const high = parseInt(highHex, 16)
  const low = parseInt(lowHex, 16)
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
}

/** True for loopback, private, link-local, shared, reserved, documentation and multicast addresses. */
export function isPrivateAddress (address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const family = isIP(bare)
  if (family === 4) return blocked.check(bare, 'ipv4')
  if (family === 6) {
    const v4 = embeddedIPv4(bare)
    return v4 !== undefined ? blocked.check(v4, 'ipv4') : blocked.check(bare, 'ipv6')
  }
  return true
}

/** The operator's way out for local testing, named in the refusals it lifts. */
const localTesting = ' For local testing, the operator can set WEBHOOK_ALLOW_PRIVATE_URLS=true (allows http and private addresses; never in production).'

/** What is wrong with a webhook URL, before any DNS lookup; undefined when it may be registered. */
export function webhookUrlProblem (text: string, allowPrivate: boolean): string | undefined {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) return `The url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters.`
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'The url must be an absolute URL, e.g. https://example.com/webhooks.'
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return `The url must use https.${localTesting}`
  if (url.username !== '' || url.password !== '') return 'The url must not contain credentials (user:password@).'
  if (url.hash !== '') return 'The url must not contain a fragment (#…).'
  if (allowPrivate) return undefined
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) !== 0) return isPrivateAddress(host) ? privateMessage : undefined
  const name = host.toLowerCase().replace(/\.$/, '')
  if (name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.local') || name.endsWith('.internal') || !name.includes('.')) {
    return privateMessage
  }
  return undefined
}

export const privateMessage = `The url must reach a public address: private, loopback and link-local addresses are refused.${localTesting}`

export type Lookup = (hostname: string) => Promise<Array<{ address: string, family: number }>>

/**
 * Registration-time check of what the URL's name resolves to now. A name that does not
 * resolve yet is accepted (deliveries check again, connection by connection).
 */
export async function resolvesPrivately (text: string, lookup: Lookup): Promise<boolean> {
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) !== 0) return isPrivateAddress(host)
  let addresses: Array<{ address: string }>
  try {
    addresses = await lookup(host)
  } catch {
    return false
  }
  return addresses.some((entry) => isPrivateAddress(entry.address))
}
