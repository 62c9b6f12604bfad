// Benchmark (not a test): what a refused request costs the app process. `GET /api/me` with the
// cookie of a session whose login is gone, answered 401: by the package (its token record deleted)
// and by the session stack alone (express + express-session + connect-redis, its session deleted).
// The package's first 401 ends the session whose login is gone, so the rows measure the same
// refusal: a cookie whose session Redis no longer holds.
// One app process each (bench/lib/bench-app.ts, the package from its build: run `npm run build`
// first), 8 keep-alive connections, rounds of 3 s interleaved; CPU per request from the process's
// own process.cpuUsage(). Starts its own redis-server and simulator.
// Run: npm run build && node -r esbuild-register bench/refusal.ts
import { Redis } from 'ioredis';
import { startSimulator } from '../lib/simulator';
import { startRedisServer } from '../test/helpers/redis-server';
import { closedLoop, keepAliveAgent, type Target } from './lib/load';
import { cpuUsOf, startBenchApps, stopBenchApps, type BenchApp } from './lib/processes';
import { enter, loginBaseline, playerOf, recordKeyOf, sessionKeyOf } from './lib/sessions';
import { median } from './lib/stats';

const ROUNDS = 5;
const ROUND_MS = 3000;
const CONNECTIONS = 8;

async function main(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const sim = await startSimulator();
  const env = { REDIS_URL: server.url, SIM_URL: sim.url, KEY_PREFIX: 'refusal:' };
  const apps: BenchApp[] = [];
  const agent = keepAliveAgent(CONNECTIONS);
  try {
    apps.push(...(await startBenchApps('baseline', 1, env)));
    apps.push(...(await startBenchApps('package', 1, env)));
    const [baseline, pkg] = apps as [BenchApp, BenchApp];
    const gone = await loginBaseline(agent, baseline.port, playerOf(0));
    await redis.del(sessionKeyOf(env.KEY_PREFIX, gone.sessionId));
    const loggedOut = await enter(agent, sim, pkg.port, playerOf(0));
    await redis.del(recordKeyOf(`${env.KEY_PREFIX}t:`, loggedOut.sessionId));
    const targets: Record<string, Target> = {
      'session stack alone, its session deleted': {
        port: baseline.port,
        path: '/api/me',
        headers: { cookie: gone.cookie, accept: 'application/json' },
      },
      'package, its token record deleted (then its session, by the first 401)': {
        port: pkg.port,
        path: '/api/me',
        headers: { cookie: loggedOut.cookie, accept: 'application/json' },
      },
    };
    const perRequest = new Map<string, number[]>();
    const perSecond = new Map<string, number[]>();
    for (let round = 0; round <= ROUNDS; round += 1) {
      for (const [name, target] of Object.entries(targets)) {
        const before = await cpuUsOf(agent, target.port);
        const load = await closedLoop({
          agent,
          concurrency: CONNECTIONS,
          durationMs: ROUND_MS,
          next: () => target,
        });
        const used = (await cpuUsOf(agent, target.port)) - before;
        const refused = load.statuses.get(401) ?? 0;
        if (refused !== load.latencies.length) {
          throw new Error(`${name}: answers other than 401: ${[...load.statuses].join(', ')}`);
        }
        if (round === 0) continue; // round 0 warms both processes up
        perRequest.set(name, [...(perRequest.get(name) ?? []), used / refused]);
        perSecond.set(name, [...(perSecond.get(name) ?? []), load.requestsPerSecond]);
      }
    }
    console.log(
      `${ROUNDS} rounds of ${ROUND_MS / 1000} s per app after one warm-up round, ${CONNECTIONS} connections`,
    );
    console.log('| 401 from | CPU per request, µs: median (rounds) | req/s, median |');
    console.log('| --- | --- | --- |');
    for (const name of Object.keys(targets)) {
      const cpu = perRequest.get(name)!;
      const rounds = cpu.map((us) => us.toFixed(0)).join(' / ');
      console.log(
        `| ${name} | ${median(cpu).toFixed(0)} (${rounds}) | ${median(perSecond.get(name)!).toFixed(0)} |`,
      );
    }
  } finally {
    agent.destroy();
    await stopBenchApps(apps);
    redis.disconnect();
    await sim.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
