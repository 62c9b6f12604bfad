// What a token request is and what a transport brings back, shared by the two transports: node:http
// (the default) and a fetch the app passes in.

import type { TokenGrant } from './token-response';

/** What is sent: the URL (with the parameters when they go in the query) and the body, if any. */
export interface TokenRequest {
  grant: TokenGrant;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** The limits one attempt runs under, whichever transport carries it. */
export interface TransportLimits {
  timeoutMs: number;
  maxResponseBytes: number;
}

/**
 * An answer that arrived in time: its status, the two headers the client reads, and its body, or
 * `undefined` when the body exceeded `maxResponseBytes` (reading stopped there).
 */
export interface TransportAnswer {
  status: number;
  contentType: string | null;
  retryAfter: string | null;
  body: Uint8Array | undefined;
}

/** What a transport rejects with when the attempt's deadline passed, told apart from any failure. */
export const DEADLINE = Object.freeze({ reason: 'token request deadline' });
