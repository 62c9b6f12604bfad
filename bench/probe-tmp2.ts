import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { startSimulator } from '../lib/simulator';
import { enter } from './lib/sessions';
import { send } from './lib/load';

async function main() {
  const redisPort = Number(process.env.RP);
  const sim = await startSimulator({ port: 0 } as never);
  const app = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/exp/prof'] : []), '-r', 'esbuild-register', 'bench/apps/serve.ts'], {
    cwd: '/work/main',
    env: { ...process.env, BENCH_APP: process.env.APP, BENCH_CLIENT: process.env.CLIENT, REDIS_URL: `redis://127.0.0.1:${redisPort}`, SIM_URL: sim.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port: number = await new Promise((r) => app.stdout!.on('data', (d) => { const m = /listening (\d+)/.exec(String(d)); if (m) r(Number(m[1])); }));
  const agent = new Agent({ keepAlive: true });
  let cookie: string;
  if (process.env.APP === 'floor') {
    const a = await send(agent, { port, path: '/login', headers: {} }, false);
    cookie = String(([] as string[]).concat(a.headers['set-cookie'] ?? [])[0]).split(';')[0]!;
  } else cookie = (await enter(agent, sim as never, port, 'player-ada')).cookie;
  const ac = spawn('npx', ['autocannon', '-c', '32', '-d', process.env.D ?? '8', '-H', `cookie=${cookie}`, `http://127.0.0.1:${port}/api/me`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = ''; ac.stdout!.on('data', (d) => (out += d)); ac.stderr!.on('data', (d) => (out += d));
  await new Promise((r) => ac.on('exit', r));
  console.log(process.env.APP, process.env.CLIENT, out.split('\n').filter((l) => /Req\/Sec|requests in|2xx|non-2xx/.test(l)).join('\n'));
  app.kill('SIGTERM'); await new Promise((r) => app.on('exit', r)); await sim.close(); agent.destroy();
}
main().catch((e) => { console.error(e); process.exit(1); });
