// Redis Cluster's key slots, as the server computes them.

/** The part of `key` Redis Cluster hashes: its hash tag when it has one, else all of it. */
export function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** CRC16 (XMODEM) of Redis Cluster's key slots, over the key's hash tag when it has one. */
export function keySlot(key: string): number {
  const hashed = hashTag(key);
  let crc = 0;
  for (const byte of Buffer.from(hashed, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc % CLUSTER_SLOTS;
}

/** Redis Cluster's number of hash slots. */
export const CLUSTER_SLOTS = 16_384;
