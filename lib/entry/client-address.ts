// The client address a failed entry is counted under: `req.ip` normalised as express-rate-limit 8
// keys addresses (IPv4-mapped IPv6 back to IPv4, other IPv6 by its /56), with the port a proxy may
// append stripped, then hashed with a key every process shares so the store holds no address.
import { createHmac, createSecretKey } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/** `[v6]`, `[v6]:port` (RFC 3986 authority form, as some proxies write X-Forwarded-For). */
const BRACKETED = /^\[([^\]]+)\](?::\d{1,5})?$/;
/** `a.b.c.d:port` (Azure Application Gateway and others append the client's port). */
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
/** Longest unparsable value kept as a key: a header cannot make the key (or its hash input) big. */
const MAX_RAW_LENGTH = 100;

/** The eight 16-bit groups of an IPv6 address, or `undefined` when it does not parse. */
function ipv6Groups(address: string): number[] | undefined {
  if (!isIPv6(address)) return undefined;
  // The URL parser serialises IPv6 canonically (lower case, hex only, `::` for the longest zeros),
  // so `::FFFF:1.2.3.4` and `::ffff:102:304` come out the same.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::') as [string, string | undefined];
  const groups = (part: string | undefined): number[] =>
    part === undefined || part === '' ? [] : part.split(':').map((group) => parseInt(group, 16));
  const left = groups(head);
  if (tail === undefined) return left;
  const right = groups(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** `groups` masked to their first `bits` bits, written out in full with the prefix length. */
function ipv6Network(groups: number[], bits: number): string {
  const masked = groups.map((group, index) => {
    const keep = Math.min(16, Math.max(0, bits - index * 16));
    return keep === 0 ? 0 : group & (0xffff << (16 - keep));
  });
  return `${masked.map((group) => group.toString(16)).join(':')}/${bits}`;
}

/**
 * The normalised form of a client address: IPv4 as is; IPv4-mapped IPv6 (`::ffff:a.b.c.d`, in
 * either spelling) as its IPv4; other IPv6 as its network of `ipv6Subnet` bits (one customer's
 * allocation, so a client cannot pick a fresh counter from its own range). A port, brackets and a
 * zone index are dropped. `undefined` when the value is not an IP address.
 */
export function normaliseClientAddress(raw: string, ipv6Subnet: number): string | undefined {
  let address = raw.trim();
  address = BRACKETED.exec(address)?.[1] ?? IPV4_WITH_PORT.exec(address)?.[1] ?? address;
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);
  if (isIPv4(address)) return address;
  const groups = ipv6Groups(address);
  if (groups === undefined) return undefined;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high, low] = [groups[6]!, groups[7]!];
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return ipv6Network(groups, ipv6Subnet);
}

/**
 * Builds how the limit names one client: `keyOf(address)` (`req.ip`) is its counter key, and
 * whether it parsed. An unparsable value is counted under itself: whoever can choose it could
 * choose any valid address just as well. The hash is an HMAC keyed from `sharedSecret` (the client secret, which
 * every process of the game holds): a bare SHA-256 of an IPv4 address reverses by trying all 2^32.
 */
export function createClientAddressKeys(
  sharedSecret: string,
  ipv6Subnet: number,
): { keyOf(address: string): { key: string; parsed: boolean } } {
  // A key of its own, derived once, so the client secret itself never keys anything stored. Kept
  // as a KeyObject: an HMAC keyed by one costs 1.7 µs on Node 24, by a Buffer 13 µs (the key is
  // prepared again on every call), on every entry.
  const hashKey = createSecretKey(
    createHmac('sha256', sharedSecret)
      .update('express-platform-login/entry-failure-address')
      .digest(),
  );
  return {
    keyOf(address) {
      const normalised = normaliseClientAddress(address, ipv6Subnet);
      const name = normalised ?? `raw:${address.trim().toLowerCase().slice(0, MAX_RAW_LENGTH)}`;
      const hash = createHmac('sha256', hashKey).update(name).digest('base64url').slice(0, 22);
      return { key: `entry-failures:${hash}`, parsed: normalised !== undefined };
    },
  };
}
