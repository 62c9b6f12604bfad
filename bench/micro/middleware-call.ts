// login.middleware() called on its own, in a loop, on a request express-session loaded for a
// logged-in player (as on the hot path), beside a middleware that reads the session's marker: no
// HTTP, since whole requests swing by more than the middleware costs. The median of the rounds'
// differences; the request-cost section runs this file and reads its last line.
// Run: npm run build && node -r esbuild-register -r ./bench/lib/built-package.ts bench/micro/middleware-call.ts
// (CLIENT=ioredis|node-redis, ROUNDS=n)
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { platformLogin, RedisSessionStore, RedisTokenStore } from '../../lib';
import { startSimulator } from '../../lib/simulator';
import { listen } from '../../test/helpers/http-from';
import { startRedisServer } from '../../test/helpers/redis-server';
import { connectRedis, sessionStackApp, type ClientChoice } from '../apps/session-stack';
import { keepAliveAgent, send } from '../lib/load';
import { benchLogin } from '../lib/settings';
import { enter } from '../lib/sessions';
import { alternatingRuns } from '../lib/rounds';
import { median } from '../lib/stats';

const ROUNDS = Number(process.env.ROUNDS ?? 21);
const CALLS = 200_000;
/** Calls between two turns of the event loop. */
const SLICE = 5_000;

async function main(): Promise<void> {
  const choice = (process.env.CLIENT ?? 'ioredis') as ClientChoice;
  const redisServer = await startRedisServer();
  const sim = await startSimulator();
  const redis = await connectRedis(choice, `redis://127.0.0.1:${redisServer.port}`);
  const store = new RedisTokenStore({ redis: redis.client, allowPlaintextTokens: true });
  const login = platformLogin({ ...benchLogin(sim.url), store });
  const middleware = login.middleware();
  let captured: { req: Request; res: Response } | undefined;
  const app = sessionStackApp(new RedisSessionStore({ redis: redis.client }));
  app.use('/platform/callback', login.callback);
  app.get('/api/me', middleware, (req, res) => {
    captured = { req, res };
    res.json({ openId: req.platformUser!.openId });
  });
  const { port } = await listen(app);
  const agent = keepAliveAgent(1);
  const { cookie } = await enter(agent, sim, port, 'player-ada');
  // Twice: the first request reads Redis, the second is served from memory, as the hot path is.
  for (let i = 0; i < 2; i += 1) {
    const answer = await send(agent, { port, path: '/api/me', headers: { cookie } });
    if (answer.status !== 200) throw new Error(`GET /api/me answered ${answer.status}`);
  }
  const { req, res } = captured!;
  let served = 0;
  const route: NextFunction = () => {
    // What the bench apps' route reads: the player, or the marker without the middleware.
    if (req.platformUser !== undefined) served += 1;
  };
  const withoutIt: RequestHandler = (request, _res, next) => {
    if (request.session.platformLogin !== undefined) served += 1;
    next();
  };
  /**
   * ns per call of `handler`, every call passing on at once (from memory), in slices with the event
   * loop turned between them: memory serves only within the lease its heartbeats renew.
   */
  const time = async (handler: RequestHandler, after: NextFunction): Promise<number> => {
    const before = served;
    let elapsed = 0n;
    for (let slice = 0; slice < CALLS / SLICE; slice += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      const started = process.hrtime.bigint();
      for (let i = 0; i < SLICE; i += 1) handler(req, res, after);
      elapsed += process.hrtime.bigint() - started;
    }
    if (served - before !== CALLS) throw new Error('a call did not pass on at once');
    return Number(elapsed) / CALLS;
  };
  const samples = await alternatingRuns(
    {
      'login.middleware()': () => time(middleware, route),
      'marker read': () => time(withoutIt, () => {}),
    },
    ROUNDS,
  );
  for (const [name, values] of samples)
    console.log(`${choice}, ${name}: ${(median(values) / 1000).toFixed(3)} µs per call`);
  const marker = samples.get('marker read')!;
  const differences = samples.get('login.middleware()')!.map((ns, round) => ns - marker[round]!);
  const [low, high] = [Math.min(...differences) / 1000, Math.max(...differences) / 1000];
  const costUs = median(differences) / 1000;
  console.log(
    `${choice}: the middleware's own cost ${costUs.toFixed(3)} µs per call ` +
      `(median of ${ROUNDS} rounds of ${CALLS}; rounds ${low.toFixed(3)} to ${high.toFixed(3)})`,
  );
  // For the request-cost section, which runs this file and reads its last line (µs).
  console.log(JSON.stringify({ costUs, rounds: ROUNDS, low, high }));
  // The rest (server, clients, simulator) ends with the process.
  await redisServer.stop();
  process.exit(0);
}

void main();
