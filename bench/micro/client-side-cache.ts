// Is node-redis's own client-side cache (`clientSideCache`, RESP3) as cheap as the package's record
// cache for a hit? Per hit, on a private redis-server: node-redis's cached `get` then the record
// decoded (plain, and sealed), beside the record cache's Map lookup of the decoded record.
// Run: node -r esbuild-register bench/micro/client-side-cache.ts
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { RecordKeyRing } from '../../lib/stores/encryption';
import { readRecordValue, recordValue } from '../../lib/core/record-value';
import { sampleRecord } from '../../lib/testing/samples';
import { startRedisServer } from '../../test/helpers/redis-server';
import { alternatingRuns } from '../lib/rounds';
import { median } from '../lib/stats';

const HITS = 20_000;
const ROUNDS = 5;

/** ns per call of `hit`, over HITS calls. */
async function perHitNs(hit: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < HITS; i += 1) await hit();
  return Number(process.hrtime.bigint() - start) / HITS;
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  const client = createClient({
    socket: { port: server.port, host: '127.0.0.1' },
    RESP: 3,
    clientSideCache: { ttl: 0, maxEntries: 10_000 },
    commandOptions: { typeMapping: { 36: Buffer } },
  });
  client.on('error', () => undefined);
  await client.connect();
  const ring = new RecordKeyRing([{ id: 'k1', key: randomBytes(32) }]);
  const record = sampleRecord(1);
  // Stored as RedisTokenStore stores them: `<version>|<value>`, the value as the engine writes it.
  const plainKey = 'measure:t:a';
  const sealedKey = 'measure:t:b';
  await client.set(plainKey, `1|${recordValue(record, 't:a')}`);
  await client.set(sealedKey, `1|${recordValue(record, 't:b', ring)}`);
  const valueOf = (bytes: Uint8Array): string => {
    const text = asBuffer(bytes).toString('utf8');
    return text.slice(text.indexOf('|') + 1);
  };
  const decodePlain = (value: Uint8Array): unknown => readRecordValue(valueOf(value), 't:a');
  const decodeSealed = (value: Uint8Array): unknown => readRecordValue(valueOf(value), 't:b', ring);
  // A reply from the cache is a structuredClone of the stored Buffer: a plain Uint8Array, not a Buffer.
  const get = async (key: string) => (await client.get(key)) as unknown as Uint8Array;
  const probe = await get(plainKey);
  console.log(`reply: ${probe.constructor.name} (Buffer: ${Buffer.isBuffer(probe)})`);
  const asBuffer = (bytes: Uint8Array): Buffer =>
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoded = new Map([['a', Object.freeze(decodePlain(await get(plainKey)))]]);
  const before = client.clientSideCache!.stats();
  const samples = await alternatingRuns(
    {
      'node-redis clientSideCache hit + decode (plain):': () =>
        perHitNs(async () => decodePlain(await get(plainKey))),
      'node-redis clientSideCache hit + open + decode: ': () =>
        perHitNs(async () => decodeSealed(await get(sealedKey))),
      'record cache hit (decoded, frozen):            ': () =>
        perHitNs(async () => decoded.get('a')),
    },
    ROUNDS,
  );
  const stats = client.clientSideCache!.stats();
  console.log(`hits per round ${HITS}, median of ${ROUNDS} rounds, Node ${process.version}`);
  for (const [name, values] of samples) console.log(`${name} ${Math.round(median(values))} ns`);
  console.log(`clientSideCache misses during the runs: ${stats.missCount - before.missCount}`);
  await client.close();
  await server.stop();
}

void main();
