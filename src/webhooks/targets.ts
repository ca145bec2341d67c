// Where a webhook may send: an https URL whose host is a public address, checked
// when the endpoint is created and again on every delivery, after DNS, on the very
// address the connection then goes to (so a name that starts resolving to a
// private address is refused, not requested). Loopback, private, link-local,
// unique-local, carrier-grade NAT (where some clouds keep their metadata service),
// multicast, reserved and translation ranges are all not public. Every check
// judges the host as targetHost gives it, so that one name spelt two ways
// (localhost and localhost., a hosts-file name with and without its dot) gets
// one verdict.
import dns from 'node:dns'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'

export const WEBHOOK_URL_MAX_LENGTH = 2048

// IPv6's global unicast space: everything else (IPv4-compatible ::/96 among it) is not public.
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3')

/** Whether an IP address (either family, IPv4-mapped IPv6 read as IPv4) is public. */
export function isPublicAddress (address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  let ip = ipaddr.parse(address)
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) ip = v6.toIPv4Address()
    else if (!v6.match(GLOBAL_UNICAST)) return false
  }
  return ip.range() === 'unicast'
}

export interface TargetPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: http, and private or loopback addresses, for development and tests. */
  allowPrivate: boolean
}

export class TargetRefused extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'TargetRefused'
  }
}

function unbracket (hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

/**
 * A URL's host as every check here judges it: without an IPv6 literal's brackets,
 * in lower case, without the one trailing dot that makes a name absolute
 * (`localhost.` is localhost, and the hosts file knows its names only without
 * it, so a lookup with the dot misses them). The URL parser has already written
 * an international name in its ASCII form (IDNA) and read every spelling of an
 * IPv4 address (0x7f.1, 2130706433, 127.0.0.1.) as the address.
 */
export function targetHost (hostname: string): string {
  const host = unbracket(hostname).toLowerCase()
  return host.endsWith('.') ? host.slice(0, -1) : host
}

/** Why a URL's port may not be sent to; null when it may. */
export function portRefused (url: URL): string | null {
  // Port 0 is no port a server listens on: a connection to it fails, on every attempt.
  return url.port === '0' ? 'must not use port 0' : null
}

/**
 * The URL if an endpoint may have it; else why not (TargetRefused). A name is
 * resolved now, and refused when any of its addresses is not public; a name that
 * does not resolve yet is taken: every delivery checks again.
 */
export async function checkWebhookUrl (text: string, policy: TargetPolicy): Promise<URL> {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) throw new TargetRefused(`must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new TargetRefused('must be an absolute URL')
  }
  const schemes = policy.allowPrivate ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) throw new TargetRefused(policy.allowPrivate ? 'must be an http or https URL' : 'must be an https URL')
  if (url.username !== '' || url.password !== '') throw new TargetRefused('must not carry a user name or password')
  if (url.hostname === '') throw new TargetRefused('must name a host')
  const port = portRefused(url)
  if (port !== null) throw new TargetRefused(port)
  const host = targetHost(url.hostname)
  // One dot at the end is a name's absolute form; anything else empty is no name.
  if (!ipaddr.isValid(host) && host.split('.').includes('')) throw new TargetRefused('must name a valid host (a label is empty)')
  if (policy.allowPrivate) return url
  if (ipaddr.isValid(host)) {
    if (!isPublicAddress(host)) throw new TargetRefused('must be a public address, not a loopback, private, link-local or otherwise reserved one')
    return url
  }
  if (host === 'localhost' || host.endsWith('.localhost')) throw new TargetRefused('must be a public host, not localhost')
  let addresses: dns.LookupAddress[]
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true })
  } catch {
    return url
  }
  const refused = addresses.find((a) => !isPublicAddress(a.address))
  if (refused !== undefined) throw new TargetRefused(`resolves to ${refused.address}, which is not a public address`)
  return url
}

/**
 * A DNS lookup for outgoing connections that fails when the name resolves to any
 * address that is not public: the connection goes to an address this checked.
 */
export function publicOnlyLookup (policy: TargetPolicy): LookupFunction {
  return (given, options, callback) => {
    const hostname = targetHost(given)
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, '', 4)
      const list = addresses as dns.LookupAddress[]
      const refused = policy.allowPrivate ? undefined : list.find((a) => !isPublicAddress(a.address))
      if (refused !== undefined || list.length === 0) {
        const reason = new TargetRefused(refused === undefined ? `${hostname} has no address` : `${hostname} resolves to ${refused.address}, which is not a public address`)
        return callback(Object.assign(reason, { code: 'EADDRNOTPUBLIC' }) as NodeJS.ErrnoException, '', 4)
      }
      if (options.all === true) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list)
      const [first] = list as [dns.LookupAddress]
      callback(null, first.address, first.family)
    })
  }
}

/** Whether a URL's host is an IP literal that is not public (connections to a literal skip the lookup). */
export function literalRefused (url: URL, policy: TargetPolicy): string | null {
  const host = targetHost(url.hostname)
  if (policy.allowPrivate || !ipaddr.isValid(host) || isPublicAddress(host)) return null
  return `${host} is not a public address`
}
