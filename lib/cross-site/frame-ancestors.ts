// Content-Security-Policy `frame-ancestors` limited to the platform's origins: only the platform's
// pages may show the game in a frame (no clickjacking by another site).
import type { RequestHandler } from 'express';

/**
 * Middleware that adds the policy to every response. It appends a separate header, so a policy set
 * elsewhere (helmet) stays in force beside it — browsers enforce every policy they receive.
 */
export function createFrameAncestors(origins: readonly string[]): RequestHandler {
  const policy = `frame-ancestors ${origins.join(' ')}`;
  return function frameAncestors(_req, res, next) {
    res.append('Content-Security-Policy', policy);
    next();
  };
}
