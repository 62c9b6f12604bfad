// Is node-redis's own client-side cache (`clientSideCache`, RESP3) as cheap as the package's record
// cache for a hit? Measures, per hit, on a private redis-server:
//   a) node-redis 6 `clientSideCache`: `client.get(key)` served from its cache (a structuredClone of
//      the stored Buffer, a promise), then the record decoded — plain, and sealed (AES-256-GCM);
//   b) the package's record cache: a Map lookup of the decoded, frozen record, in a promise.
// Run: node -r esbuild-register bench/micro/client-side-cache.ts
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { RecordKeyRing } from '../../lib/stores/encryption';
import { readRecordValue, recordValue } from '../../lib/core/record-value';
import { sampleRecord } from '../../lib/testing/samples';
import { startRedisServer } from '../../test/helpers/redis-server';

const HITS = 20_000;
const ROUNDS = 5;

async function perHitNs(hit: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 2000; i += 1) await hit(); // warm-up
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < HITS; i += 1) await hit();
    samples.push(Number(process.hrtime.bigint() - start) / HITS);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(ROUNDS / 2)]!; // median round
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
  const probe = (await client.get(plainKey)) as unknown as Uint8Array;
  console.log(`reply: ${probe.constructor.name} (Buffer: ${Buffer.isBuffer(probe)})`);
  const asBuffer = (bytes: Uint8Array): Buffer =>
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const before = client.clientSideCache!.stats();
  const cscPlain = await perHitNs(async () =>
    decodePlain((await client.get(plainKey)) as unknown as Uint8Array),
  );
  const cscSealed = await perHitNs(async () =>
    decodeSealed((await client.get(sealedKey)) as unknown as Uint8Array),
  );
  const stats = client.clientSideCache!.stats();
  const decoded = new Map([
    ['a', Object.freeze(decodePlain((await client.get(plainKey)) as unknown as Uint8Array))],
  ]);
  const recordCache = await perHitNs(async () => decoded.get('a'));
  const round = (ns: number): string => `${Math.round(ns)} ns`;
  console.log(`hits per round ${HITS}, median of ${ROUNDS} rounds, Node ${process.version}`);
  console.log(`node-redis clientSideCache hit + decode (plain):  ${round(cscPlain)}`);
  console.log(`node-redis clientSideCache hit + open + decode:   ${round(cscSealed)}`);
  console.log(`record cache hit (decoded, frozen):              ${round(recordCache)}`);
  console.log(`clientSideCache misses during the runs: ${stats.missCount - before.missCount}`);
  await client.close();
  await server.stop();
}

void main();
