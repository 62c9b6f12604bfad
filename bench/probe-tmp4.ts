import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { startSimulator } from '../lib/simulator';
import { enter } from './lib/sessions';
import { send } from './lib/load';
async function main() {
  const sim = await startSimulator({ port: 0 } as never);
  const agent = new Agent({ keepAlive: true });
  for (const name of ['floor', 'package-sessions']) {
    const p = spawn(process.execPath, ['-r', 'esbuild-register', 'bench/apps/serve.ts'], { cwd: '/work/main', env: { ...process.env, BENCH_APP: name, BENCH_CLIENT: 'node-redis', REDIS_URL: `redis://127.0.0.1:6399`, SIM_URL: sim.url }, stdio: ['ignore', 'pipe', 'inherit'] });
    const port: number = await new Promise((r) => p.stdout!.on('data', (d) => { const m = /listening (\d+)/.exec(String(d)); if (m) r(Number(m[1])); }));
    let cookie: string;
    if (name === 'floor') { const a = await send(agent, { port, path: '/login', headers: {} }, false); cookie = String(([] as string[]).concat(a.headers['set-cookie'] ?? [])[0]).split(';')[0]!; }
    else cookie = (await enter(agent, sim as never, port, 'player-ada')).cookie;
    const a = await send(agent, { port, path: '/api/me', headers: { cookie } }, true);
    console.log(name, a.status, JSON.stringify(a.headers), a.body);
    p.kill('SIGTERM');
  }
  await sim.close(); agent.destroy();
}
main();
