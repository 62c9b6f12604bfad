// What the package's own per-request time is set beside (BENCH_FLOOR=1 in a package app): the
// least any middleware of this kind does per request, hand-written. The session's login marker, a
// Map lookup of the session's record by session id, an identity check, the record left in
// res.locals under a symbol, and a getter on Express's request prototype that reads it back. No
// freshness check, no refresh, no renewal, no cache bookkeeping, no errors answered.
import express, { type RequestHandler } from 'express';
import type { TokenRecord } from '../../lib/core/token-record';
import type { TokenStore } from '../../lib/core/token-store';

const SLOT = Symbol('bench-floor');

interface FloorRecord {
  readonly openId: string;
  readonly scope: readonly string[];
  readonly tokenExpiresAt: number;
}

/** `fill` copies each session's record into the floor's Map (untimed); `middleware` is the floor. */
export function floor(store: TokenStore): { fill: RequestHandler; middleware: RequestHandler } {
  const records = new Map<string, FloorRecord>();
  Object.defineProperty(express.request, 'floorUser', {
    configurable: true,
    get(this: { res: { locals: Record<symbol, FloorRecord> } }) {
      return this.res.locals[SLOT];
    },
  });
  const fill: RequestHandler = (req, _res, next) => {
    if (records.has(req.sessionID)) return next();
    store.get(req.sessionID).then((record: TokenRecord | undefined) => {
      if (record !== undefined) {
        records.set(
          req.sessionID,
          Object.freeze({
            openId: record.openId,
            scope: record.scope,
            tokenExpiresAt: record.accessExpiresAt,
          }),
        );
      }
      next();
    }, next);
  };
  const middleware: RequestHandler = (req, res, next) => {
    const marker = req.session.platformLogin;
    const record = records.get(req.sessionID);
    if (marker === undefined || record === undefined || record.openId !== marker.openId) {
      res.status(401).end();
      return;
    }
    (res.locals as Record<symbol, FloorRecord>)[SLOT] = record;
    next();
  };
  return { fill, middleware };
}
