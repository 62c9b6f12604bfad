// What login.middleware() costs per request, in one process, to a resolution the request-cost
// section cannot reach: that section subtracts the CPU of two app processes, and two processes
// started alike keep speeds some 5 % apart (about 3 µs of a 55 µs request), the size of the figure.
// Here the two apps (bench/apps/package-app.ts with and without the middleware, sessions on
// RedisSessionStore so that no request sends a Redis command) run side by side in this process on
// one client; each round times 16 requests in flight against each in turn (the order swapped every
// round), the load generator in this process too, alike for both. The figure: the median over
// rounds of the difference in CPU per request.
// Run: npm run build && node -r esbuild-register -r ./bench/lib/built-package.ts bench/micro/middleware-cost.ts
// (CLIENT=ioredis|node-redis, ROUNDS=n, PER_ROUND=n); the package from dist/, as the app processes run it. The
// request-cost section runs it and reports its figure against the floor's CPU per request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSimulator } from '../../lib/simulator';
import { RedisSessionStore } from '../../lib';
import { startRedisServer } from '../../test/helpers/redis-server';
import { packageApp } from '../apps/package-app';
import { connectRedis, type ClientChoice } from '../apps/session-stack';
import { closedLoop, keepAliveAgent } from '../lib/load';
import { enter } from '../lib/sessions';
import { median } from '../lib/stats';

const ROUNDS = Number(process.env.ROUNDS ?? 15);
const PER_ROUND = Number(process.env.PER_ROUND ?? 20_000);
const IN_FLIGHT = 16;

async function main(): Promise<void> {
  const choice = (process.env.CLIENT ?? 'ioredis') as ClientChoice;
  const redisServer = await startRedisServer();
  const sim = await startSimulator();
  const redis = await connectRedis(choice, `redis://127.0.0.1:${redisServer.port}`);
  const agent = keepAliveAgent(IN_FLIGHT);
  const servers: Server[] = [];
  const variants: Record<string, { port: number; cookie: string }> = {};
  for (const [name, middleware] of [
    ['with the middleware', true],
    ['without it', false],
  ] as const) {
    const sessions = new RedisSessionStore({ redis: redis.client, prefix: `mw-${middleware}:` });
    const server = createServer(packageApp(redis, sim.url, sessions, middleware).app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const { cookie } = await enter(agent, sim, port, 'player-ada');
    variants[name] = { port, cookie };
  }
  /** CPU µs per request of `count` requests of `/api/me` to `variant`. */
  const cpuPerRequest = async (name: string, count: number): Promise<number> => {
    const { port, cookie } = variants[name]!;
    const before = process.cpuUsage();
    const result = await closedLoop({
      agent,
      concurrency: IN_FLIGHT,
      durationMs: 60_000,
      next: (index) => (index < count ? { port, path: '/api/me', headers: { cookie } } : undefined),
    });
    const used = process.cpuUsage(before);
    if (result.statuses.get(200) !== count) throw new Error(`${name}: not every answer 200`);
    return (used.user + used.system) / count;
  };
  const names = Object.keys(variants);
  for (const name of names) await cpuPerRequest(name, PER_ROUND);
  const differences: number[] = [];
  const totals: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    const cpu: Record<string, number> = {};
    for (const name of order) cpu[name] = await cpuPerRequest(name, PER_ROUND);
    for (const name of names) totals[name]!.push(cpu[name]!);
    differences.push(cpu[names[0]!]! - cpu[names[1]!]!);
  }
  for (const name of names)
    console.log(`${choice}, ${name}: ${median(totals[name]!).toFixed(1)} µs of CPU per request`);
  const sorted = [...differences].sort((a, b) => a - b);
  console.log(
    `${choice}: the middleware's own cost ${median(differences).toFixed(2)} µs per request ` +
      `(median of ${ROUNDS} rounds of ${PER_ROUND}; rounds ${sorted[0]!.toFixed(2)} to ${sorted.at(-1)!.toFixed(2)})`,
  );
  // For the request-cost section, which runs this file and reads its last line.
  console.log(
    JSON.stringify({
      costUs: median(differences),
      rounds: ROUNDS,
      low: sorted[0],
      high: sorted.at(-1),
    }),
  );
  agent.destroy();
  for (const server of servers) server.close();
  await redis.close();
  await sim.close();
  await redisServer.stop();
}

void main();
