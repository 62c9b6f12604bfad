// Probe: count Redis commands per request for a bench app variant.
import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { Redis } from 'ioredis';
import { startSimulator } from '../lib/simulator';
import { enter } from '../bench/lib/sessions';
import { send } from '../bench/lib/load';

async function main() {
  const redisPort = Number(process.env.RP);
  const sim = await startSimulator({ port: 0 } as never);
  const app = spawn(process.execPath, ['-r', 'esbuild-register', 'bench/apps/serve.ts'], {
    cwd: '/work/main',
    env: { ...process.env, BENCH_APP: process.env.APP, BENCH_CLIENT: process.env.CLIENT, REDIS_URL: `redis://127.0.0.1:${redisPort}`, SIM_URL: sim.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port: number = await new Promise((r) => app.stdout!.on('data', (d) => { const m = /listening (\d+)/.exec(String(d)); if (m) r(Number(m[1])); }));
  const agent = new Agent({ keepAlive: true });
  const s = await enter(agent, sim as never, port, 'player-ada');
  const redis = new Redis(redisPort);
  for (let i = 0; i < 20; i++) await send(agent, { port, path: '/api/me', headers: { cookie: s.cookie } }, false);
  await redis.config('RESETSTAT');
  const N = 500;
  for (let i = 0; i < N; i++) { const a = await send(agent, { port, path: '/api/me', headers: { cookie: s.cookie } }, false); if (a.status !== 200) console.log(a.status); }
  const info = await redis.info('commandstats');
  console.log(process.env.APP, process.env.CLIENT, info.split('\n').filter((l) => l.startsWith('cmdstat')).map((l) => l.replace(/,usec_per_call.*$/, '')).join('\n'));
  app.kill('SIGTERM'); await sim.close(); redis.disconnect(); agent.destroy();
}
main().catch((e) => { console.error(e); process.exit(1); });
