// The client address an entry failure is counted under: normalised as express-rate-limit 8 keys
// addresses (IPv4-mapped IPv6 as IPv4, other IPv6 by its /56 or the configured prefix), a proxy's
// port dropped, and only an HMAC of it, keyed by a secret every process shares, in the key.
import { createHash } from 'node:crypto';
import { createClientAddressKeys, normaliseClientAddress } from '../../lib/entry/client-address';

const SECRET = 'demo-secret';
const keys = createClientAddressKeys(SECRET, 56);
const keyOf = (ip: string): string => keys.keyOf(ip).key;

test('one IPv4 address, one key; another address, another key; the address itself is not in it', () => {
  expect(keyOf('203.0.113.7')).toBe(keyOf('203.0.113.7'));
  expect(keyOf('203.0.113.7')).not.toBe(keyOf('203.0.113.8'));
  expect(keyOf('203.0.113.7')).not.toContain('203.0.113');
  expect(keyOf('203.0.113.7')).toMatch(/^entry-failures:[\w-]{22}$/);
});

test('a port appended by a proxy is dropped: every connection of one client shares its counter', () => {
  for (const spelling of ['203.0.113.7:51234', '203.0.113.7:1', ' 203.0.113.7 ']) {
    expect({ spelling, key: keyOf(spelling) }).toEqual({ spelling, key: keyOf('203.0.113.7') });
  }
  expect(keyOf('[2001:db8:1234:5600::1]:443')).toBe(keyOf('2001:db8:1234:5600::1'));
  expect(keyOf('[2001:db8:1234:5600::1]')).toBe(keyOf('2001:db8:1234:5600::1'));
});

test('an IPv4-mapped IPv6 address counts as its IPv4 address, in every spelling', () => {
  for (const spelling of [
    '::ffff:203.0.113.7',
    '::FFFF:203.0.113.7',
    '::ffff:cb00:7107',
    '0:0:0:0:0:ffff:cb00:7107',
    '[::ffff:203.0.113.7]:8080',
  ]) {
    expect({ spelling, normal: normaliseClientAddress(spelling, 56) }).toEqual({
      spelling,
      normal: '203.0.113.7',
    });
  }
  // Two mapped addresses stay two clients (masking them to a /56 would merge every IPv4 client).
  expect(keyOf('::ffff:203.0.113.7')).not.toBe(keyOf('::ffff:203.0.113.8'));
});

test('IPv6 addresses count by their /56 prefix, however they are written', () => {
  const base = keyOf('2001:db8:1234:5600::1');
  expect(keyOf('2001:db8:1234:56ff:ffff:ffff:ffff:ffff')).toBe(base);
  expect(keyOf('2001:0db8:1234:5601:0:0:0:9')).toBe(base);
  expect(keyOf('2001:DB8:1234:5600::1')).toBe(base);
  expect(keyOf('2001:db8:1234:5600::1%eth0')).toBe(base);
  expect(keyOf('2001:db8:1234:5700::1')).not.toBe(base);
  expect(keyOf('2001:db8:1235:5600::1')).not.toBe(base);
  expect(keyOf('::1')).toBe(keyOf('::2'));
  expect(keyOf('::1')).not.toBe(base);
});

test('the IPv6 prefix is configurable (entryFailureIpv6Subnet)', () => {
  const by64 = createClientAddressKeys(SECRET, 64);
  expect(by64.keyOf('2001:db8:1234:5600::1').key).not.toBe(by64.keyOf('2001:db8:1234:5601::1').key);
  expect(by64.keyOf('2001:db8:1234:5600::1').key).toBe(
    by64.keyOf('2001:db8:1234:5600:ffff::1').key,
  );
  expect(normaliseClientAddress('2001:db8:1234:5678::1', 48)).toBe('2001:db8:1234:0:0:0:0:0/48');
});

test('an unparsable address is reported as such, and keyed under its own value', () => {
  for (const bad of ['unknown', '', '203.0.113.7.1', 'proxy.internal', '_hidden']) {
    expect({ bad, parsed: keys.keyOf(bad).parsed }).toEqual({ bad, parsed: false });
  }
  expect(keys.keyOf('203.0.113.7').parsed).toBe(true);
  expect(keyOf('unknown')).not.toBe(keyOf('other'));
});

test('the hash is keyed: not a bare SHA-256 of the address, and another secret gives other keys', () => {
  const bare = (value: string): string =>
    createHash('sha256').update(value).digest('base64url').slice(0, 22);
  const key = keyOf('203.0.113.7').slice('entry-failures:'.length);
  for (const input of ['203.0.113.7', 'address:203.0.113.7']) expect(key).not.toBe(bare(input));
  expect(createClientAddressKeys('another-secret', 56).keyOf('203.0.113.7').key).not.toBe(
    keyOf('203.0.113.7'),
  );
  // Every process of the game (same client secret) names an address the same way.
  expect(createClientAddressKeys(SECRET, 56).keyOf('203.0.113.7').key).toBe(keyOf('203.0.113.7'));
});
