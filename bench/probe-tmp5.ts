import session from 'express-session';
import { createClient } from 'redis';
import { RedisSessionStore } from '../lib';
async function main() {
  const client = createClient({ url: 'redis://127.0.0.1:6399' }); await client.connect();
  const store = new RedisSessionStore({ redis: client });
  const mem = new session.MemoryStore();
  const sess: any = { cookie: { originalMaxAge: null, expires: null, httpOnly: true, path: '/' }, platformLogin: { openId: 'player-ada', entry: 'AAAAAAAAAAAAAAAAAAAAAA', recordExpiresAt: Date.now() + 3600e3 } };
  await new Promise<void>((r, j) => store.set('sid1', sess, (e) => (e ? j(e) : r())));
  await new Promise<void>((r) => mem.set('sid1', sess, () => r()));
  while (!store.serving) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => store.get('sid1', r as never));
  for (const [name, s] of [['redis-session-store', store], ['memory', mem], ['redis-session-store', store], ['memory', mem]] as const) {
    const N = 200000; const t0 = process.cpuUsage();
    for (let i = 0; i < N; i++) { let got: any; (s as any).get('sid1', (_e: unknown, v: unknown) => (got = v)); if (!got) throw new Error('miss ' + name); (s as any).touch('sid1', got, () => {}); }
    const c = process.cpuUsage(t0); console.log(name, ((c.user + c.system) / N).toFixed(2), 'µs per get+touch');
  }
  await store.close(); await client.destroy();
}
main();
