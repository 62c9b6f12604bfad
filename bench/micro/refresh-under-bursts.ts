// Issue 52.1's figure: six logins with 1-second tokens ask a harness app process (the package on
// RedisSessionStore, one Redis, no replica) for their token every 200 ms while another process
// sends it bursts of 1,500 `GET /ping` every 2 s, which stall its event loop past the record
// cache's lease (before docs/durability.md's signs, that held every refresh back for 3 s).
// Run: npm run build && node -r esbuild-register bench/micro/refresh-under-bursts.ts (DURATION_S=n)
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator } from '../../lib/simulator';
import { startRedisServer } from '../../test/helpers/redis-server';
import { startHarnessApp } from '../lib/app-process';
import { asPlayer, keepAliveAgent, send } from '../lib/load';
import { enter, playerOf } from '../lib/sessions';

const DURATION_MS = Number(process.env.DURATION_S ?? 30) * 1000;
const BURSTS = `setInterval(() => { for (let i = 0; i < 1500; i += 1) fetch(process.argv[1]).then((r) => r.text(), () => {}); }, 2000);`;

async function run(kind: 'ioredis' | 'node-redis', redisUrl: string): Promise<string> {
  const sim = await startSimulator({ rotateRefreshTokens: true, accessTokenLifetimeSeconds: 1 });
  const app = await startHarnessApp('package', {
    ...{ REDIS_URL: redisUrl, SIM_URL: sim.url, KEY_PREFIX: `bursts-${kind}:` },
    ...{ BENCH_REDIS_CLIENT: kind, BENCH_SESSION_STORE: 'memory' },
  });
  const agent = keepAliveAgent(6);
  try {
    const sessions = [];
    for (let index = 0; index < 6; index += 1)
      sessions.push(await enter(agent, sim, app.port, playerOf(index)));
    sim.resetCalls();
    const flood = spawn(process.execPath, ['-e', BURSTS, `http://127.0.0.1:${app.port}/ping`]);
    const answers: { status: number; ms: number }[] = [];
    const until = Date.now() + DURATION_MS;
    await Promise.all(
      sessions.map(async ({ cookie }) => {
        while (Date.now() < until) {
          answers.push(await send(agent, asPlayer(app.port, cookie, '/api/token')));
          await sleep(200);
        }
      }),
    );
    flood.kill();
    const failed = answers.filter((answer) => answer.status !== 200).length;
    const slowest = Math.max(...answers.map((answer) => answer.ms));
    return `| ${kind} | ${answers.length} | ${failed} | ${slowest.toFixed(0)} | ${sim.calls.refresh_token} |`;
  } finally {
    agent.destroy();
    await app.stop();
    await sim.close();
  }
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  try {
    console.log(
      `Bursts of 1,500 requests every 2 s for ${DURATION_MS / 1000} s, six logins with 1-second tokens:`,
    );
    console.log('| client | player requests | not 200 | slowest (ms) | platform refreshes |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const kind of ['ioredis', 'node-redis'] as const) console.log(await run(kind, server.url));
  } finally {
    await server.stop();
  }
}

void main();
