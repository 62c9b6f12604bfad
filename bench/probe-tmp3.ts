import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { startSimulator } from '../lib/simulator';
import { enter } from './lib/sessions';
import { send } from './lib/load';

const cpuOf = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
async function main() {
  const redisPort = Number(process.env.RP);
  const sim = await startSimulator({ port: 0 } as never);
  const agent = new Agent({ keepAlive: true });
  const apps: { name: string; p: ChildProcess; port: number; cookie: string; cpu: number; req: number }[] = [];
  for (const name of (process.env.APPS ?? 'floor,package,package-sessions').split(',')) {
    const p = spawn(process.execPath, ['-r', 'esbuild-register', 'bench/apps/serve.ts'], {
      cwd: '/work/main',
      env: { ...process.env, BENCH_APP: name, BENCH_CLIENT: process.env.CLIENT, REDIS_URL: `redis://127.0.0.1:${redisPort}`, SIM_URL: sim.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port: number = await new Promise((r) => p.stdout!.on('data', (d) => { const m = /listening (\d+)/.exec(String(d)); if (m) r(Number(m[1])); }));
    let cookie: string;
    if (name.startsWith('floor')) {
      const a = await send(agent, { port, path: '/login', headers: {} }, false);
      cookie = String(([] as string[]).concat(a.headers['set-cookie'] ?? [])[0]).split(';')[0]!;
    } else cookie = (await enter(agent, sim as never, port, 'player-ada')).cookie;
    apps.push({ name, p, port, cookie, cpu: 0, req: 0 });
  }
  const run = async (a: (typeof apps)[0], d: number, count: boolean) => {
    const c0 = cpuOf(a.p.pid!);
    const ac = spawn('npx', ['autocannon', '-j', '-c', '32', '-d', String(d), '-H', `cookie=${a.cookie}`, `http://127.0.0.1:${a.port}/api/me`], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = ''; ac.stdout!.on('data', (x) => (out += x));
    await new Promise((r) => ac.on('exit', r));
    const j = JSON.parse(out);
    if (count) { a.cpu += cpuOf(a.p.pid!) - c0; a.req += j['2xx']; if (j.non2xx) console.log(a.name, 'non2xx', j.non2xx); }
  };
  for (const a of apps) await run(a, 3, false);
  const pairs = Number(process.env.PAIRS ?? 4);
  for (let i = 0; i < pairs; i++) for (const a of i % 2 ? [...apps].reverse() : apps) await run(a, 5, true);
  const floor = apps[0]!;
  for (const a of apps) console.log(process.env.CLIENT, a.name.padEnd(18), 'req', a.req, 'req÷floor', (a.req / floor.req).toFixed(3), 'cpu/req µs', (a.cpu * 1000 / a.req).toFixed(1), 'cpu÷floor', ((a.cpu / a.req) / (floor.cpu / floor.req)).toFixed(3));
  for (const a of apps) a.p.kill('SIGTERM');
  await sim.close(); agent.destroy();
}
main().catch((e) => { console.error(e); process.exit(1); });
