// The bounds of key tracking under each fault, measured on a private redis-server for each client
// kind at its default protocol: how long after a change (or a fault) a copy may still be served.
// Run: node -r esbuild-register bench/micro/tracking-bounds.ts [repetitions, default 10]
import { Redis } from 'ioredis';
import { KeyTracking, type KeyChangeListener } from '../../lib/stores/caching/key-tracking';
import { redisCommands } from '../../lib/stores/redis/redis-client';
import { defaultClientKinds, type ClientKind } from '../../test/helpers/redis-clients';
import { startRedisServer, type TestRedisServer } from '../../test/helpers/redis-server';
import { startTcpProxy } from '../../test/helpers/tcp-proxy';

const REPETITIONS = Number(process.argv[2] ?? 10);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<number> {
  const giveUpAt = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error('timed out');
    await new Promise((resolve) => setImmediate(resolve));
  }
  return Date.now();
}

/** A tracking whose listener stamps what it was told. */
function watch(tracking: () => KeyTracking) {
  const seen = { changedAt: 0, allAt: 0, offAt: 0 };
  const listener: KeyChangeListener = {
    changed: () => (seen.changedAt = Date.now()),
    allChanged: () => (seen.allAt = Date.now()),
    liveChanged: (live) => {
      if (!live) seen.offAt = Date.now();
    },
  };
  return { seen, listener, tracking };
}

const summary = (values: number[]): string => {
  const sorted = [...values].sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms`;
};

async function measure(kind: ClientKind, server: TestRedisServer, admin: Redis): Promise<void> {
  const proxy = await startTcpProxy(server.port);
  const client = await kind.connect({ port: proxy.port });
  const prefix = `bounds-${kind.library}:`;
  const { seen, listener } = watch(() => tracking);
  const tracking = new KeyTracking(redisCommands(client), prefix, listener);
  const results: Record<string, number[]> = {
    change: [],
    swapdb: [],
    silent: [],
    kill: [],
    stallBack: [],
  };
  const reset = (): void => {
    seen.changedAt = seen.allAt = seen.offAt = 0;
  };
  for (let i = 0; i < REPETITIONS; i += 1) {
    await until(() => tracking.live);
    await sleep(Math.random() * 100); // anywhere in the heartbeat cycle
    reset();
    let at = Date.now();
    await admin.set(`${prefix}k`, String(i));
    results.change!.push((await until(() => seen.changedAt > 0)) - at);

    await until(() => tracking.live);
    await sleep(Math.random() * 100);
    reset();
    at = Date.now();
    await admin.swapdb(0, 1);
    results.swapdb!.push((await until(() => seen.allAt > 0)) - at);
    await admin.swapdb(0, 1);

    await until(() => tracking.live);
    await sleep(Math.random() * 100);
    reset();
    at = Date.now();
    proxy.freeze();
    results.silent!.push((await until(() => seen.offAt > 0)) - at);
    proxy.thaw();

    await until(() => tracking.live);
    reset();
    const list = String(await admin.call('CLIENT', 'LIST'));
    const id = list
      .split('\n')
      .find((line) => /\bflags=\S*t/.test(line))
      ?.match(/\bid=(\d+)/)?.[1];
    at = Date.now();
    await admin.call('CLIENT', 'KILL', 'ID', id!);
    results.kill!.push((await until(() => seen.offAt > 0)) - at);

    await until(() => tracking.live);
    const sleeper = new Redis(server.port, '127.0.0.1');
    await sleeper.call('DEBUG', 'SLEEP', '1');
    at = Date.now();
    results.stallBack!.push((await until(() => tracking.live)) - at);
    sleeper.disconnect();
  }
  console.log(`${kind.name}:`);
  console.log(`  change elsewhere -> reported:            ${summary(results.change!)}`);
  console.log(`  SWAPDB -> every copy dropped:            ${summary(results.swapdb!)}`);
  console.log(`  silent (frozen) connection -> cache off: ${summary(results.silent!)}`);
  console.log(`  CLIENT KILL -> cache off:                ${summary(results.kill!)}`);
  console.log(`  1 s stall ends -> cache on again:        ${summary(results.stallBack!)}`);
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
