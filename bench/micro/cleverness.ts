// Micro-measurements of issue 28.1: what each small cleverness of the request path saves, against
// the plain way, in µs per request. Paired alternation: every round times the clever and the plain
// variant back to back (the order swapped each round), so a moment when the shared machine stalls
// lands on both; the figure is the median over rounds of the per-round difference.
// Run: node -r esbuild-register bench/micro/cleverness.ts (ROUNDS=n, ONLY=<part of a row's name>)
/* eslint-disable @typescript-eslint/no-explicit-any -- Express's request objects are built by hand here */
import { createHash } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import express from 'express';
import { createNoopMeter } from '@opentelemetry/api';
import { LoginRequiredError } from '../../lib/errors';
import { freshnessOf, type FreshnessPolicy } from '../../lib/core/freshness';
import type { TokenRecord } from '../../lib/core/token-record';
import { median } from '../lib/stats';

const ROUNDS = Number(process.env.ROUNDS ?? 21);

/** µs per call of `run(i)` over `n` calls (sync). */
function timeSync(n: number, run: (i: number) => unknown): number {
  let sink: unknown;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i += 1) sink = run(i);
  const ns = Number(process.hrtime.bigint() - start);
  if (sink === Symbol.for('never')) console.log(sink);
  return ns / n / 1000;
}

async function timeAsync(n: number, run: (i: number) => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i += 1) await run(i);
  return Number(process.hrtime.bigint() - start) / n / 1000;
}

interface Pair {
  name: string;
  n: number;
  clever: (i: number) => unknown;
  plain: (i: number) => unknown;
  async?: boolean;
}

const ONLY = process.env.ONLY;

async function measure(pair: Pair): Promise<void> {
  if (ONLY !== undefined && !pair.name.includes(ONLY)) return;
  const time = (run: (i: number) => unknown) =>
    pair.async
      ? timeAsync(pair.n, run as (i: number) => Promise<unknown>)
      : Promise.resolve(timeSync(pair.n, run));
  // Warm-up: both variants optimised before the first timed round.
  await time(pair.clever);
  await time(pair.plain);
  const clever: number[] = [];
  const plain: number[] = [];
  const saved: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    let c: number;
    let p: number;
    if (round % 2 === 0) {
      c = await time(pair.clever);
      p = await time(pair.plain);
    } else {
      p = await time(pair.plain);
      c = await time(pair.clever);
    }
    clever.push(c);
    plain.push(p);
    saved.push(p - c);
  }
  const sorted = [...saved].sort((a, b) => a - b);
  const q = (f: number) => sorted[Math.floor(f * (sorted.length - 1))]!;
  console.log(
    `| ${pair.name} | ${median(clever).toFixed(3)} | ${median(plain).toFixed(3)} | ` +
      `${median(saved).toFixed(3)} (${q(0.25).toFixed(3)}…${q(0.75).toFixed(3)}) |`,
  );
}

// 1. core/hash.ts: the 10,000-id memo against one SHA-256 per call (100 sessions in turn, as the
//    hot-path bench's load; express-session ids are 32 characters).
const ids = Array.from({ length: 100 }, (_, i) => `${i}`.padStart(32, 'x'));
const shortHash = (value: string): string =>
  createHash('sha256').update(value).digest('base64url').slice(0, 22);
const memo = new Map<string, string>();
function memoised(id: string): string {
  let hash = memo.get(id);
  if (hash === undefined) {
    hash = shortHash(`session:${id}`);
    if (memo.size >= 10_000) memo.delete(memo.keys().next().value as string);
    memo.set(id, hash);
  }
  return hash;
}

// 2. errors.ts (loginRequiredWithoutStack): the 401's error without a stack (stackTraceLimit zeroed) against a plain
//    `new LoginRequiredError()`, made under 25 frames (Express's router and middleware stack).
function stackless(): LoginRequiredError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new LoginRequiredError();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
const deep = (depth: number, make: () => unknown): unknown =>
  depth === 0 ? make() : deep(depth - 1, make);

// 3. http/request-accessors.ts: per request, a new IncomingMessage given Express's request
//    prototype (as Express does), its context set, then one read of req.platformUser. Clever: the
//    module-level last request/context and last prototype; plain: res.locals slot and the install
//    check on every request.
const app = express();
const SLOT = Symbol('slot');
const INSTALLED = Symbol('installed');
type Ctx = { user: string };
let lastRequest: object | undefined;
let lastContext: Ctx | undefined;
let checkedPrototype: unknown;
function homeOf(req: object): object {
  for (let proto = Object.getPrototypeOf(req) as object | null; proto !== null;) {
    const above = Object.getPrototypeOf(proto) as object | null;
    if (above === IncomingMessage.prototype) return proto;
    proto = above;
  }
  return req;
}
Object.defineProperties(express.request, {
  userClever: {
    configurable: true,
    get(this: any) {
      if (this === lastRequest) return lastContext!.user;
      return (this.res?.locals?.[SLOT] as Ctx).user;
    },
  },
  userPlain: {
    configurable: true,
    get(this: any) {
      return (this.res?.locals?.[SLOT] as Ctx).user;
    },
  },
  [INSTALLED]: { value: true },
});
function setClever(req: any, res: any, ctx: Ctx): void {
  const proto: unknown = Object.getPrototypeOf(req);
  if (proto !== checkedPrototype) {
    const home = homeOf(req);
    if (home[INSTALLED as keyof object] !== true) throw new Error('not installed');
    if (home !== req) checkedPrototype = proto;
  }
  res.locals[SLOT] = ctx;
  lastRequest = req;
  lastContext = ctx;
}
function setPlain(req: any, res: any, ctx: Ctx): void {
  if (homeOf(req)[INSTALLED as keyof object] !== true) throw new Error('not installed');
  res.locals[SLOT] = ctx;
}
const socket = new Socket();
function expressRequest(): { req: any; res: any } {
  const req: any = new IncomingMessage(socket);
  const res: any = new ServerResponse(req);
  Object.setPrototypeOf(req, app.request);
  Object.setPrototypeOf(res, app.response);
  req.res = res;
  res.req = req;
  res.locals = Object.create(null);
  req.next = undefined;
  return { req, res };
}
const ctx: Ctx = { user: 'player' };

// 4. observability/noop-instrument.ts: a store read timed into the API's no-op histogram against
//    one handed through untimed (what the check saves when no SDK is registered).
const noop = createNoopMeter().createHistogram('h');
const labels = Object.freeze({ operation: 'get', outcome: 'ok' });
const record = { openId: 'p' } as unknown as TokenRecord;
const read = (): Promise<TokenRecord> => Promise.resolve(record);
async function timedRead(): Promise<TokenRecord> {
  const startedAt = performance.now();
  try {
    const result = await read();
    noop.record((performance.now() - startedAt) / 1000, labels);
    return result;
  } catch (error) {
    noop.record((performance.now() - startedAt) / 1000, labels);
    throw error;
  }
}

// 5. core/freshness.ts: freshTest's closure over the policy's numbers against
//    freshnessOf(record, now, policy) === 'fresh'.
const policy: FreshnessPolicy = { refreshSkewMs: 60_000, refreshAheadFraction: 0.75 };
const now = Date.now();
const fresh = { obtainedAt: now, accessExpiresAt: now + 7_200_000 } as TokenRecord;
const { refreshSkewMs, refreshAheadFraction } = policy;
const freshTest = (r: TokenRecord, t: number): boolean =>
  !(t >= r.accessExpiresAt - refreshSkewMs) &&
  !(
    refreshAheadFraction < 1 &&
    t >= r.obtainedAt + (r.accessExpiresAt - r.obtainedAt) * refreshAheadFraction
  );

async function main(): Promise<void> {
  console.log(`${ROUNDS} rounds, paired; µs per request: clever | plain | saved (median, IQR)`);
  console.log('| cleverness | clever µs | plain µs | saved µs |');
  console.log('|---|---|---|---|');
  await measure({
    name: 'session-id hash memo (core/hash.ts)',
    n: 20_000,
    clever: (i) => memoised(ids[i % 100]!),
    plain: (i) => shortHash(`session:${ids[i % 100]!}`),
  });
  await measure({
    name: 'stackless 401 error (errors.ts loginRequiredWithoutStack), 25 frames deep',
    n: 20_000,
    clever: () => deep(25, stackless),
    plain: () => deep(25, () => new LoginRequiredError()),
  });
  await measure({
    name: 'last request/context globals (http/request-accessors.ts)',
    n: 20_000,
    clever: () => {
      const { req, res } = expressRequest();
      setClever(req, res, ctx);
      return req.userClever;
    },
    plain: () => {
      const { req, res } = expressRequest();
      setPlain(req, res, ctx);
      return req.userPlain;
    },
  });
  await measure({
    name: 'no-op instrument check (observability/noop-instrument.ts)',
    n: 20_000,
    async: true,
    clever: () => read(),
    plain: () => timedRead(),
  });
  await measure({
    name: 'freshness rule written twice (core/freshness.ts)',
    n: 200_000,
    clever: () => freshTest(fresh, now),
    plain: () => freshnessOf(fresh, now, policy) === 'fresh',
  });
}

void main();
