// RedisTokenStore's record cache on a private redis-server: records served from memory, and every
// way a record can change elsewhere (another store, logoutPlayer, DEL, expiry, FLUSHDB, a killed
// invalidation connection, a Redis restart) seen by the cache; the in-flight read race; the size
// bound; the fallback where CLIENT is refused; the option that turns it off; waiters woken.
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { hashSessionId } from '../../lib/core/hash';
import { platformLogin } from 'express-platform-login';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { loginOptions } from '../helpers/test-app';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { newSessionKey, sampleRecord } from 'express-platform-login/testing';
import type { PutOptions } from '../../lib/core/store-engine';
import type { TokenRecord } from '../../lib/core/token-record';
import { eventually, valueOnce, waitUntil } from '../helpers/wait-until';
import type { RedisClient } from '../../lib/redis/redis-client';
import { READ_WITH_TTL } from '../../lib/stores/scripts';
import { interceptCommands, storeClientKind, testWhere } from '../helpers/redis-clients';
import { startTcpProxy } from '../helpers/tcp-proxy';
import { TRACKING_TIMING } from '../../lib/caching/bounds';
import { commandCount } from '../helpers/command-counts';
import { engineOf } from '../../lib/core/derived-engine';

/** The client the stores run on (ioredis, or node-redis in the `node-redis` projects). */
const kind = storeClientKind();

const TTL_MS = 60_000;
const prefix = 'cache-test:';
const recordKey = (sessionId: string): string => `${prefix}t:${hashSessionId(sessionId)}`;

// These tests name sessions by their session ids, as a browser's cookie does; the store is keyed
// by their hash, which the middleware computes once per request.
const put = (store: RedisTokenStore, sessionId: string, record: TokenRecord, options: PutOptions) =>
  engineOf(store).records.put(hashSessionId(sessionId), record, options);
/** The record of a session; `undefined` when absent or unreadable. */
async function get(store: RedisTokenStore, sessionId: string): Promise<TokenRecord | undefined> {
  const read = await engineOf(store).records.get(hashSessionId(sessionId));
  return read.status === 'found' ? read.record : undefined;
}
/** Resolves once the store is told the session's record or lock may have changed, or after `ms`. */
function nextChange(store: RedisTokenStore, sessionId: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unwatch();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unwatch = engineOf(store).changes!.watch(hashSessionId(sessionId), done);
  });
}

let server: TestRedisServer;
let raw: Redis;
const clients: RedisClient[] = [];
const stores: RedisTokenStore[] = [];

/** A client with the options the store's documentation asks for. */
async function newClient(port = server.port, keyPrefix?: string): Promise<RedisClient> {
  const client = await kind.connect({ port, ...(keyPrefix === undefined ? {} : { keyPrefix }) });
  clients.push(client);
  return client;
}

/** A store on a client of its own, as in another process; resolves once its cache is on. */
async function newStore(
  options: Partial<ConstructorParameters<typeof RedisTokenStore>[0]> = {},
): Promise<RedisTokenStore> {
  const store = new RedisTokenStore({ redis: await newClient(), prefix, ...options });
  stores.push(store);
  if (options.recordCache !== false) {
    await waitUntil(() => store.recordCacheActive, 'the record cache to come on');
  }
  return store;
}

/** GET commands the server has run so far. */
function getCalls(client: Redis = raw): Promise<number> {
  return commandCount(client, 'get');
}

/**
 * Runs `body` (which counts the reads it expects) until a run during which the store's memory
 * served throughout: on, never emptied (every emptying wakes every watcher), and no report of a
 * change of the `sessionIds` records came (Redis's report of a write may come after a read cached
 * the record, and drop it: one read more, never a stale record). Memory is emptied by design
 * whenever it may have missed a change, a lease that ran out on a loaded machine included
 * (docs/caching.md), and the next read then goes to Redis; a run without either must read exactly
 * what `body` expects.
 */
async function whileServing<T>(
  store: RedisTokenStore,
  body: () => Promise<T>,
  sessionIds: string[] = [],
): Promise<T> {
  for (;;) {
    await waitUntil(() => store.recordCacheActive, 'the record cache on');
    let told = false;
    const unwatch = [newSessionKey(), ...sessionIds].map((id) =>
      engineOf(store).changes!.watch(hashSessionId(id), () => (told = true)),
    );
    const result = await body().finally(() => unwatch.forEach((stop) => stop()));
    if (!told) return result;
  }
}

/** Reads (GET, the miss's script's included) Redis runs during `reading`. */
async function readsDuring(reading: () => Promise<unknown>): Promise<number> {
  const before = await getCalls();
  await reading();
  return (await getCalls()) - before;
}

/** The store reads `version` of the record, and reads it again from memory (no GET reaches Redis). */
async function expectServedFromMemory(
  store: RedisTokenStore,
  sessionId: string,
  version: number,
): Promise<void> {
  const reads = await whileServing(store, async () => {
    expect((await get(store, sessionId))?.version).toBe(version);
    return readsDuring(async () => expect((await get(store, sessionId))?.version).toBe(version));
  }, [sessionId]);
  expect(reads).toBe(0);
}

/**
 * Reads the session's record until it is no longer version 1 (a failed read counts as gone);
 * resolves when the last read that still found it was asked for (0: none). Where Redis no longer
 * holds version 1, that read was served from memory, which its lease bounds by design: each hit
 * compares the lease's end with the request's own clock, however late this process's timers run.
 */
async function servedUntilGone(store: RedisTokenStore, sessionId: string): Promise<number> {
  let lastAskedAt = 0;
  for (;;) {
    const askedAt = Date.now();
    const read = await get(store, sessionId).catch(() => undefined);
    if (read?.version !== 1) return lastAskedAt;
    lastAskedAt = askedAt;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Reads until the store answers `expected` version (`undefined`: no record); errors count as not yet. */
/**
 * The version `store` reads for `sessionId` once it is `expected` (`undefined`: no record), or the
 * last one it read after the wait: for the test to assert on.
 */
const versionOnceRead = (
  store: RedisTokenStore,
  sessionId: string,
  expected: number | undefined,
): Promise<number | undefined | 'failed'> =>
  valueOnce(
    async () => {
      try {
        return (await get(store, sessionId))?.version;
      } catch {
        return 'failed' as const;
      }
    },
    (version) => version === expected,
  );

/**
 * Runs `write` and resolves once each reader has had Redis's message about the session's key: a
 * record cached before that message arrives is dropped by it (one more read from Redis, no harm).
 */
async function writtenAndSeen(
  readers: RedisTokenStore[],
  sessionId: string,
  write: () => Promise<unknown>,
): Promise<void> {
  const seen = readers.map((reader) => nextChange(reader, sessionId, 10_000));
  await write();
  await Promise.all(seen);
}

beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await Promise.all(clients.map((client) => kind.quit(client)));
  raw.disconnect();
  await server.stop();
});

describe('served from memory', () => {
  test('a record read once is served without a Redis read, decoded and with no GET', async () => {
    const [store, writer] = [await newStore(), await newStore()];
    const sessionId = newSessionKey();
    await writtenAndSeen([store], sessionId, () =>
      put(writer, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS }),
    );
    const reads = await whileServing(store, async () => {
      expect((await get(store, sessionId))?.version).toBe(1);
      return readsDuring(async () => {
        for (let i = 0; i < 50; i += 1) expect((await get(store, sessionId))?.version).toBe(1);
      });
    }, [sessionId]);
    expect(reads).toBe(0);
  });

  test('encrypted records too: the cache holds the decrypted record', async () => {
    const encryptionKeys = [{ id: 'k1', key: randomBytes(32) }];
    const store = await newStore({ encryptionKeys });
    const sessionId = newSessionKey();
    const record = sampleRecord(1);
    await writtenAndSeen([store], sessionId, () =>
      put(store, sessionId, record, { expectedVersion: null, ttlMs: TTL_MS }),
    );
    const reads = await whileServing(store, async () => {
      expect(await get(store, sessionId)).toEqual(record);
      return readsDuring(async () => expect(await get(store, sessionId)).toEqual(record));
    }, [sessionId]);
    expect(reads).toBe(0);
  });

  test('this store’s own writes and deletes are seen at once', async () => {
    const store = await newStore();
    const sessionId = newSessionKey();
    await put(store, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
    expect((await get(store, sessionId))?.version).toBe(1);
    await put(store, sessionId, sampleRecord(2), { expectedVersion: 1, ttlMs: TTL_MS });
    expect((await get(store, sessionId))?.version).toBe(2);
    await engineOf(store).records.delete(hashSessionId(sessionId));
    expect(await get(store, sessionId)).toBeUndefined();
  });
});

describe('a change made elsewhere is seen', () => {
  let reader: RedisTokenStore;
  let other: RedisTokenStore;
  let sessionId: string;
  let first: ReturnType<typeof sampleRecord>;

  beforeAll(async () => {
    reader = await newStore();
    other = await newStore();
  });

  beforeEach(async () => {
    sessionId = newSessionKey();
    first = sampleRecord(1);
    await writtenAndSeen([reader], sessionId, () =>
      put(other, sessionId, first, { expectedVersion: null, ttlMs: TTL_MS }),
    );
    // Cached in the reader: a second read needs no GET.
    await expectServedFromMemory(reader, sessionId, 1);
  });

  test("another process's refresh (a compare-and-set put)", async () => {
    await put(other, sessionId, sampleRecord(2), { expectedVersion: 1, ttlMs: TTL_MS });
    expect(await versionOnceRead(reader, sessionId, 2)).toBe(2);
  });

  test("another process's logout (delete)", async () => {
    await engineOf(other).records.delete(hashSessionId(sessionId), { expectedVersion: 1 });
    expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
  });

  test('logoutPlayer (deletePlayer) in another process', async () => {
    expect(await engineOf(other).records.deletePlayer(first.openId)).toBe(1);
    expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
  });

  test('DEL typed by an operator', async () => {
    await raw.del(recordKey(sessionId));
    expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
  });

  test('expiry of the key in Redis (PEXPIRE set by hand)', async () => {
    await raw.pexpire(recordKey(sessionId), 50);
    expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
  });

  test('FLUSHDB typed by an operator', async () => {
    const second = newSessionKey();
    await put(other, second, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
    expect((await get(reader, second))?.version).toBe(1);
    await raw.flushdb();
    expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
    expect(await versionOnceRead(reader, second, undefined)).toBeUndefined();
  });
});

test('a record read with a short TTL is gone from the cache when Redis expires it', async () => {
  const store = await newStore();
  const sessionId = newSessionKey();
  await put(store, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: 300 });
  expect((await get(store, sessionId))?.version).toBe(1);
  expect(await versionOnceRead(store, sessionId, undefined)).toBeUndefined();
});

test('SWAPDB (which Redis does not report): a cached record is not served once it left the database', async () => {
  const reader = await newStore();
  const sessionId = newSessionKey();
  await put(reader, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  await expectServedFromMemory(reader, sessionId, 1);
  await raw.swapdb(0, 1);
  // Taken once Redis ran it: a heartbeat that read the old mark was sent before this.
  const swappedAt = Date.now();
  try {
    expect(await servedUntilGone(reader, sessionId)).toBeLessThan(
      swappedAt + TRACKING_TIMING.leaseMs,
    );
  } finally {
    await raw.swapdb(0, 1);
  }
  expect(await versionOnceRead(reader, sessionId, 1)).toBe(1);
});

test('a silent (half-open) tracking connection: a record deleted meanwhile is served no longer than the lease', async () => {
  const proxy = await startTcpProxy(server.port);
  const client = await kind.connect({ port: proxy.port });
  const reader = new RedisTokenStore({ redis: client, prefix, operationTimeoutMs: 200 });
  try {
    await waitUntil(() => reader.recordCacheActive, 'the record cache to come on');
    const sessionId = newSessionKey();
    await put(reader, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
    expect((await get(reader, sessionId))?.version).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
    proxy.freeze(); // nothing goes through any more, and nothing closes
    // Taken once frozen: every heartbeat answered from here on was sent before.
    const frozenAt = Date.now();
    await raw.del(recordKey(sessionId)); // its report cannot arrive
    expect(await servedUntilGone(reader, sessionId)).toBeLessThan(
      frozenAt + TRACKING_TIMING.leaseMs,
    );
    proxy.thaw();
    expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
  } finally {
    await reader.close();
    await kind.quit(client);
    await proxy.close();
  }
});

/** True for the record read of a cache miss: the READ_WITH_TTL script. */
const isRecordRead = (args: readonly unknown[]): boolean =>
  args[0] === 'EVALSHA' && args[1] === READ_WITH_TTL.sha;

/** `client` with its record reads passed through `wrap`; every other command is the client's own. */
function withRecordReads(
  client: RedisClient,
  wrap: (read: () => Promise<unknown>) => Promise<unknown>,
): RedisClient {
  return interceptCommands(client, isRecordRead, wrap);
}

test('the in-flight read race: a change arriving while a read is in flight is not cached over', async () => {
  // The reader's client hands over the answer of its next record read (a script sent with
  // callBuffer) only when the test says so; the read itself runs in Redis at once.
  const client = await newClient();
  let gate: (() => void) | undefined;
  let holdNextRead = false;
  const held = withRecordReads(client, (read) => {
    if (!holdNextRead) return read();
    holdNextRead = false;
    const answer = read();
    return new Promise((resolve) => (gate = () => resolve(answer)));
  });
  const reader = new RedisTokenStore({ redis: held, prefix });
  stores.push(reader);
  await waitUntil(() => reader.recordCacheActive, 'the record cache to come on');
  const writer = await newStore();
  const sessionId = newSessionKey();
  await put(writer, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });

  // A first read loads the read's script into Redis: the held read is then one EVALSHA, not a
  // NOSCRIPT answer followed by an EVAL that the gate does not hold.
  await get(reader, newSessionKey());
  holdNextRead = true;
  const inFlight = get(reader, sessionId);
  await kind.ping(client); // the read (sent before this PING on the same connection) has run: it read version 1
  expect(gate).toBeDefined(); // and it is the one held
  const changed = nextChange(reader, sessionId, 30_000);
  await put(writer, sessionId, sampleRecord(2), { expectedVersion: 1, ttlMs: TTL_MS });
  await changed; // the reader has had Redis's invalidation of the key
  // A request arriving now does not take the held read's answer: it predates the change.
  expect((await get(reader, sessionId))?.version).toBe(2);
  gate!();
  expect((await inFlight)?.version).toBe(1); // what Redis answered before the change
  expect((await get(reader, sessionId))?.version).toBe(2); // and not left in the cache
});

/**
 * A store on a client of its own that counts the record reads it sends (a cache miss is one
 * script, sent with callBuffer); the writes it sends are not counted.
 */
async function countingStore(): Promise<{
  store: RedisTokenStore;
  reads: () => number;
  client: RedisClient;
}> {
  let reads = 0;
  const client = await newClient();
  const counted = withRecordReads(client, (read) => {
    reads += 1;
    return read();
  });
  const store = new RedisTokenStore({ redis: counted, prefix });
  stores.push(store);
  await waitUntil(() => store.recordCacheActive, 'the record cache to come on');
  await get(store, newSessionKey()); // loads the read's script: one EVALSHA per read from here on
  return { store, reads: () => reads, client };
}

test('requests that miss the same record at once share one read', async () => {
  const writer = await newStore({ recordCache: false });
  const { store: reader, reads } = await countingStore();
  const sessionId = newSessionKey();
  await put(writer, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  const before = reads();
  const answers = await Promise.all(Array.from({ length: 10 }, () => get(reader, sessionId)));
  expect(answers.map((record) => record?.version)).toEqual(Array(10).fill(1));
  expect(reads() - before).toBe(1);
});

test('a shared read that fails fails every request that shared it, and the next request reads again', async () => {
  const writer = await newStore({ recordCache: false });
  let reads = 0;
  let failNext = false;
  const client = withRecordReads(await newClient(), (read) => {
    reads += 1;
    if (!failNext) return read();
    failNext = false;
    // The connection drops under the read: its answer never comes.
    return new Promise((_resolve, reject) =>
      setTimeout(() => reject(new Error('Connection is closed.')), 20),
    );
  });
  const reader = new RedisTokenStore({ redis: client, prefix });
  stores.push(reader);
  await waitUntil(() => reader.recordCacheActive, 'the record cache to come on');
  await get(reader, newSessionKey()); // loads the read's script: one EVALSHA per read from here on
  const sessionId = newSessionKey();
  await put(writer, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  reads = 0;
  failNext = true;
  const shared = await Promise.allSettled([get(reader, sessionId), get(reader, sessionId)]);
  expect(shared.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
  expect(reads).toBe(1);
  expect((await get(reader, sessionId))?.version).toBe(1);
  expect(reads).toBe(2);
});

test('no read again on a client the app is quitting: its QUIT is the last command it sends', async () => {
  const writer = await newStore({ recordCache: false });
  const { store: reader, reads, client } = await countingStore();
  const sessionId = newSessionKey();
  await put(writer, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  expect((await get(reader, sessionId))?.version).toBe(1);
  const before = reads();
  const seen = nextChange(reader, sessionId, 10_000);
  const quitting = kind.end(client); // written now; the DEL's report arrives after it
  await raw.del(recordKey(sessionId));
  await seen;
  expect(reads() - before).toBe(0);
  await expect(quitting).resolves.not.toThrow();
});

test('a held record another process changes or deletes is read by the next request only, once', async () => {
  const writer = await newStore({ recordCache: false });
  const { store: reader, reads } = await countingStore();
  const sessionId = newSessionKey();
  await put(writer, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  expect((await get(reader, sessionId))?.version).toBe(1);

  // Changed: nothing is sent on the report itself (a read written after the app's QUIT would break
  // that QUIT, and ioredis does not say when one is under way); the next request reads, once.
  let before = reads();
  await writtenAndSeen([reader], sessionId, () =>
    put(writer, sessionId, sampleRecord(2), { expectedVersion: 1, ttlMs: TTL_MS }),
  );
  expect(reads() - before).toBe(0);
  const readsOfTwo = await whileServing(reader, async () => {
    const start = reads();
    expect((await get(reader, sessionId))?.version).toBe(2);
    expect((await get(reader, sessionId))?.version).toBe(2);
    return reads() - start;
  }, [sessionId]);
  expect(readsOfTwo).toBe(1);

  // Deleted: the next request finds nothing; a later write is read again.
  before = reads();
  await writtenAndSeen([reader], sessionId, () => raw.del(recordKey(sessionId)));
  expect(reads() - before).toBe(0);
  expect(await get(reader, sessionId)).toBeUndefined();
  await writtenAndSeen([reader], sessionId, () =>
    put(writer, sessionId, sampleRecord(3), { expectedVersion: null, ttlMs: TTL_MS }),
  );
  expect((await get(reader, sessionId))?.version).toBe(3);
});

test('holds at most recordCacheSize records, least recently used out first', async () => {
  const store = await newStore({ recordCacheSize: 2 });
  let previous: string[] = [];
  const reads = await whileServing(store, async () => {
    // Each run from an empty cache: the previous run's records deleted by this store (its own
    // deletes drop them at once), three new ones written.
    for (const id of previous) await engineOf(store).records.delete(hashSessionId(id));
    const [a, b, c] = [newSessionKey(), newSessionKey(), newSessionKey()];
    previous = [a, b, c];
    for (const id of [a, b, c]) {
      await writtenAndSeen([store], id, () =>
        put(store, id, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS }),
      );
    }
    await get(store, a);
    await get(store, b);
    await get(store, a); // b is now the least recently used
    await get(store, c); // pushes b out
    const held = await readsDuring(async () => {
      await get(store, a);
      await get(store, c);
    });
    return [held, await readsDuring(() => get(store, b))];
  });
  expect(reads).toEqual([0, 1]);
});

test('CLIENT KILL of the invalidation connection: the cache is dropped, then set up again', async () => {
  const reader = await newStore();
  const sessionId = newSessionKey();
  await put(reader, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  expect((await get(reader, sessionId))?.version).toBe(1);
  // Kill every subscriber connection and delete the record in one transaction: the invalidation
  // of the DEL has no live connection to reach.
  const tracking = String(await raw.client('LIST'))
    .split('\n')
    .filter((line) => /\bflags=\S*t|\bsub=1\b/.test(line))
    .map((line) => /\bid=(\d+)/.exec(line)![1]!);
  const kill = raw.multi();
  for (const id of tracking) kill.call('CLIENT', 'KILL', 'ID', id);
  await kill.del(recordKey(sessionId)).exec();
  expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
  await waitUntil(() => reader.recordCacheActive, 'the record cache to come back');
  // Tracking is set up again: a later change is seen, and records are cached again.
  await writtenAndSeen([reader], sessionId, () =>
    put(reader, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS }),
  );
  // Served from memory again, within the wait. `writtenAndSeen` returns on the store's own
  // invalidation of its write; Redis's report of that write comes on the tracking connection and
  // may arrive after the next read was answered, dropping what that read cached (one read more,
  // never a stale record). Since a login's put is one script, nothing else delays the test past it.
  await waitUntil(async () => {
    expect((await get(reader, sessionId))?.version).toBe(1);
    const before = await getCalls();
    expect((await get(reader, sessionId))?.version).toBe(1);
    return (await getCalls()) === before;
  }, 'the record to be served from memory again');
  await raw.del(recordKey(sessionId));
  expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
});

testWhere(kind.keyPrefixes)(
  'a client with its own keyPrefix: the cache tracks the keys Redis really holds',
  async () => {
    const client = await newClient(server.port, 'app1:');
    const reader = new RedisTokenStore({ redis: client, prefix });
    stores.push(reader);
    await waitUntil(() => reader.recordCacheActive, 'the record cache to come on');
    const sessionId = newSessionKey();
    await writtenAndSeen([reader], sessionId, () =>
      put(reader, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS }),
    );
    await expectServedFromMemory(reader, sessionId, 1);
    expect(await raw.del(`app1:${recordKey(sessionId)}`)).toBe(1);
    expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
  },
);

test('cache off by option: every read goes to Redis and no connection is opened', async () => {
  const clientsBefore = String(await raw.client('LIST'))
    .trim()
    .split('\n').length;
  const store = await newStore({ recordCache: false });
  const sessionId = newSessionKey();
  await put(store, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  const before = await getCalls();
  await get(store, sessionId);
  await get(store, sessionId);
  expect(await getCalls()).toBe(before + 2);
  expect(store.recordCacheActive).toBe(false);
  // The store's client is the one new connection.
  const clientsAfter = String(await raw.client('LIST'))
    .trim()
    .split('\n').length;
  expect(clientsAfter).toBe(clientsBefore + 1);
});

test('changes.watch tells of another process’s write, lock release and delete', async () => {
  const [waiter, holder] = [await newStore(), await newStore()];
  const sessionId = newSessionKey();
  await put(holder, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  /** Whether the waiter is told of `change` within 5 s. */
  const woken = async (change: () => Promise<unknown>): Promise<boolean> => {
    let told = false;
    const unwatch = engineOf(waiter).changes!.watch(hashSessionId(sessionId), () => {
      told = true;
    });
    try {
      await change();
      return await eventually(() => told, 5_000);
    } finally {
      unwatch();
    }
  };
  const owner = (await engineOf(holder).locks.acquire(hashSessionId(sessionId), 30_000))!;
  expect(
    await woken(() =>
      put(holder, sessionId, sampleRecord(2), { expectedVersion: 1, ttlMs: TTL_MS }),
    ),
  ).toBe(true);
  expect(await woken(() => engineOf(holder).locks.release(hashSessionId(sessionId), owner))).toBe(
    true,
  );
  expect(await woken(() => engineOf(holder).records.delete(hashSessionId(sessionId)))).toBe(true);
});

test('a Redis restart on the same port: reads fail while it is down, then are correct', async () => {
  const reader = await newStore();
  const sessionId = newSessionKey();
  await put(reader, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  expect((await get(reader, sessionId))?.version).toBe(1);
  await server.kill();
  await waitUntil(() => !reader.recordCacheActive, 'the record cache to go off');
  await expect(get(reader, sessionId)).rejects.toThrow();
  server = await startRedisServer([], { port: server.port });
  // The restarted server is empty: the record is gone for every reader.
  expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
  await waitUntil(() => reader.recordCacheActive, 'the record cache to come back');
  await put(reader, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
  expect((await get(reader, sessionId))?.version).toBe(1);
  await raw.del(recordKey(sessionId));
  expect(await versionOnceRead(reader, sessionId, undefined)).toBeUndefined();
}, 60_000);

describe('where the server refuses CLIENT', () => {
  let refusing: TestRedisServer;
  beforeAll(async () => {
    refusing = await startRedisServer(['--rename-command', 'CLIENT', '']);
  });
  afterAll(() => refusing.stop());

  test('reads go to Redis, and the refusal is reported once', async () => {
    const client = await newClient(refusing.port);
    const refusingRaw = new Redis(refusing.port, '127.0.0.1');
    const store = new RedisTokenStore({ redis: client, prefix: `refused-${randomUUID()}:` });
    stores.push(store);
    const warnings: string[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (_fields: object, message: string) => warnings.push(message),
      error: () => undefined,
    };
    platformLogin(
      loginOptions({ url: 'http://127.0.0.1:9' } as PlatformSimulator, { store, logger }),
    );
    const reasons: string[] = [];
    store.on('recordCacheUnavailable', ({ reason }) => reasons.push(reason));
    await waitUntil(() => reasons.length > 0, 'the refusal to be reported');
    expect(warnings.filter((message) => /refused client tracking/.test(message))).toHaveLength(1);
    expect(reasons[0]).toMatch(/unknown command/i);
    const sessionId = newSessionKey();
    await put(store, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: TTL_MS });
    const before = await getCalls(refusingRaw);
    expect((await get(store, sessionId))?.version).toBe(1);
    expect((await get(store, sessionId))?.version).toBe(1);
    expect(await getCalls(refusingRaw)).toBe(before + 2);
    expect(store.recordCacheActive).toBe(false);
    expect(reasons).toHaveLength(1);
    await kind.quit(client);
    refusingRaw.disconnect();
  });
});
