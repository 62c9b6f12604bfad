// What the package's own per-request time is set beside (BENCH_FLOOR=1 in a package app): the
// least any middleware of this kind does per request, hand-written. The session's login marker, a
// Map lookup of the session's record by session id, an identity check, the record left in
// res.locals under a symbol, and a getter on Express's request prototype that reads it back. No
// freshness check, no refresh, no renewal, no cache bookkeeping, no errors answered.
import express, { type NextFunction, type RequestHandler, type Response } from 'express';
import type { TokenStore } from '../../lib/core/token-store';
import { hashSessionId } from '../../lib/core/hash';

const SLOT = Symbol('bench-floor');

interface FloorRecord {
  readonly openId: string;
  readonly scope: readonly string[];
  readonly tokenExpiresAt: number;
}

/**
 * The floor's middleware. A session's first request reads its record from the store (async, as
 * any cache's first read is); after the warm-up every request is a hit. Nothing else touches the
 * Map before it: an untimed lookup in front of it (as an earlier version had) computed the session
 * id's hash and brought the Map's entries into the CPU's caches for the timed one.
 */
export function floor(store: TokenStore): RequestHandler {
  const records = new Map<string, FloorRecord>();
  Object.defineProperty(express.request, 'floorUser', {
    configurable: true,
    get(this: { res: { locals: Record<symbol, FloorRecord> } }) {
      return this.res.locals[SLOT];
    },
  });
  const load = (sessionId: string, res: Response, next: NextFunction): void => {
    store.records.get(hashSessionId(sessionId)).then((read) => {
      if (read.status !== 'found') {
        res.status(401).end();
        return;
      }
      const record = read.record;
      const copy = Object.freeze({
        openId: record.openId,
        scope: record.scope,
        tokenExpiresAt: record.accessExpiresAt,
      });
      records.set(sessionId, copy);
      (res.locals as Record<symbol, FloorRecord>)[SLOT] = copy;
      next();
    }, next);
  };
  return (req, res, next) => {
    const marker = req.session.platformLogin;
    const sessionId = req.sessionID;
    const record = records.get(sessionId);
    if (record === undefined && marker !== undefined) return load(sessionId, res, next);
    if (marker === undefined || record === undefined || record.openId !== marker.openId) {
      res.status(401).end();
      return;
    }
    (res.locals as Record<symbol, FloorRecord>)[SLOT] = record;
    next();
  };
}
