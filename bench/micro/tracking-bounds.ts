// The bounds of key tracking under each fault, measured on a private redis-server for each client
// kind at its default protocol: how long after a change (or a fault) a copy may still be served.
// Run: node -r esbuild-register bench/micro/tracking-bounds.ts [repetitions, default 10]
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { KeyTracking, type KeyChangeListener } from '../../lib/caching/key-tracking';
import { redisCommands } from '../../lib/redis/redis-client';
import { defaultClientKinds, type ClientKind } from '../../test/helpers/redis-clients';
import { startRedisServer, type TestRedisServer } from '../../test/helpers/redis-server';
import { startTcpProxy } from '../../test/helpers/tcp-proxy';
import { median } from '../lib/stats';

const REPETITIONS = Number(process.argv[2] ?? 10);

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<number> {
  const giveUpAt = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error('timed out');
    await new Promise((resolve) => setImmediate(resolve));
  }
  return Date.now();
}

const summary = (values: number[]): string =>
  `median ${median(values)} ms, max ${Math.max(...values)} ms`;

async function measure(kind: ClientKind, server: TestRedisServer, admin: Redis): Promise<void> {
  const proxy = await startTcpProxy(server.port);
  const client = await kind.connect({ port: proxy.port });
  const prefix = `bounds-${kind.library}:`;
  // When the tracking's listener was last told of a change, of every change, of going off.
  const seen = { changedAt: 0, allAt: 0, offAt: 0 };
  const listener: KeyChangeListener = {
    changed: () => (seen.changedAt = Date.now()),
    allChanged: () => (seen.allAt = Date.now()),
    liveChanged: (live) => {
      if (!live) seen.offAt = Date.now();
    },
  };
  const tracking = new KeyTracking(redisCommands(client), prefix, listener);
  const results = new Map<string, number[]>();
  const note = (fault: string, ms: number) =>
    results.set(fault, [...(results.get(fault) ?? []), ms]);
  /** ms from `act` to `done`, from a moment in the heartbeat cycle the tracking is live in. */
  const time = async (fault: string, act: () => unknown, done: () => boolean) => {
    await until(() => tracking.live);
    await sleep(Math.random() * 100);
    seen.changedAt = seen.allAt = seen.offAt = 0;
    const at = Date.now();
    await act();
    note(fault, (await until(done)) - at);
  };
  const off = (): boolean => seen.offAt > 0;
  for (let i = 0; i < REPETITIONS; i += 1) {
    const change = () => admin.set(`${prefix}k`, String(i));
    await time('change elsewhere -> reported:', change, () => seen.changedAt > 0);
    await time(
      'SWAPDB -> every copy dropped:',
      () => admin.swapdb(0, 1),
      () => seen.allAt > 0,
    );
    await admin.swapdb(0, 1);
    await time('silent (frozen) connection -> cache off:', () => proxy.freeze(), off);
    proxy.thaw();
    await until(() => tracking.live);
    const list = String(await admin.call('CLIENT', 'LIST'));
    const id = /\bid=(\d+)[^\n]*\bflags=\S*t/.exec(list)?.[1];
    await time('CLIENT KILL -> cache off:', () => admin.call('CLIENT', 'KILL', 'ID', id!), off);
    await until(() => tracking.live);
    const sleeper = new Redis(server.port, '127.0.0.1');
    await sleeper.call('DEBUG', 'SLEEP', '1');
    const stalled = Date.now();
    note('1 s stall ends -> cache on again:', (await until(() => tracking.live)) - stalled);
    sleeper.disconnect();
  }
  console.log(`${kind.name}:`);
  for (const [fault, values] of results) console.log(`  ${fault.padEnd(41)}${summary(values)}`);
  await tracking.close();
  await kind.quit(client);
  await proxy.close();
}

async function main(): Promise<void> {
  const server = await startRedisServer(['--enable-debug-command', 'yes']);
  const admin = new Redis(server.port, '127.0.0.1');
  console.log(`${REPETITIONS} repetitions per fault, Node ${process.version}`);
  try {
    for (const kind of defaultClientKinds) await measure(kind, server, admin);
  } finally {
    admin.disconnect();
    await server.stop();
  }
}

void main();
