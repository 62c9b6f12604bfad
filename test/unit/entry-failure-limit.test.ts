// The client address an entry failure is counted under: req.ip as Express decides it, IPv4-mapped
// IPv6 as IPv4, other IPv6 by its /56 prefix, and only a hash of it in the key.
import type { Request } from 'express';
import { clientAddressKey } from '../../lib/http/entry-failure-limit';

const keyOf = (ip: string): string => clientAddressKey({ ip, socket: {} } as unknown as Request);

test('one IPv4 address, one key; another address, another key; the address itself is not in it', () => {
  expect(keyOf('203.0.113.7')).toBe(keyOf('203.0.113.7'));
  expect(keyOf('203.0.113.7')).not.toBe(keyOf('203.0.113.8'));
  expect(keyOf('203.0.113.7')).not.toContain('203.0.113');
  expect(keyOf('203.0.113.7')).toMatch(/^entry-failures:[\w-]{22}$/);
});

test('an IPv4-mapped IPv6 address counts as its IPv4 address', () => {
  expect(keyOf('::ffff:203.0.113.7')).toBe(keyOf('203.0.113.7'));
});

test('IPv6 addresses count by their /56 prefix, however they are written', () => {
  const base = keyOf('2001:db8:1234:5600::1');
  expect(keyOf('2001:db8:1234:56ff:ffff:ffff:ffff:ffff')).toBe(base);
  expect(keyOf('2001:0db8:1234:5601:0:0:0:9')).toBe(base);
  expect(keyOf('2001:db8:1234:5600::1%eth0')).toBe(base);
  expect(keyOf('2001:db8:1234:5700::1')).not.toBe(base);
  expect(keyOf('2001:db8:1235:5600::1')).not.toBe(base);
  expect(keyOf('::1')).toBe(keyOf('::2'));
  expect(keyOf('::1')).not.toBe(base);
});
