// POST /token over HTTP: collects the parameters from a form or JSON body and the query string
// (the platform accepts refresh parameters in either, and clients use both), counts the call, then
// answers normally or with a fault.
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { answerWithFault } from './fault-responses';
import { styledOutcome, type TokenOutcome } from './answer-style';
import type { CallKind, FaultQueue } from './faults';
import { sendJson } from './write-response';
import type { SimulatorState } from './platform-state';
import {
  TOKEN_PARAM_NAMES,
  exchangeCode,
  oauthError,
  refreshTokens,
  type TokenParams,
} from './token-grants';

/** What the token endpoint works with. */
export interface TokenEndpointContext {
  state: SimulatorState;
  faults: FaultQueue;
  /** Aborts when the simulator closes. */
  closed: AbortSignal;
}

// Token requests are a few hundred bytes; anything near this limit is not one.
const BODY_LIMIT = '16kb';

function valuesOf(source: unknown, name: string): unknown[] {
  if (typeof source !== 'object' || source === null || !Object.hasOwn(source, name)) return [];
  const value = (source as Record<string, unknown>)[name];
  return Array.isArray(value) ? value : [value];
}

/** The known parameters from query and body, or why they are unusable (RFC 6749 3.2: each at most once). */
function collectTokenParams(query: unknown, body: unknown): TokenParams | string {
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    return 'a JSON body must be an object';
  }
  const params: TokenParams = {};
  for (const name of TOKEN_PARAM_NAMES) {
    const values = [...valuesOf(query, name), ...valuesOf(body, name)];
    if (values.length > 1) return `parameter ${name} was sent more than once`;
    const value = values[0];
    if (value === undefined) continue;
    if (typeof value !== 'string') return `parameter ${name} must be a string`;
    if (value !== '') params[name] = value;
  }
  return params;
}

function callKind(params: TokenParams | string): CallKind {
  const grant = typeof params === 'string' ? undefined : params.grant_type;
  return grant === 'authorization_code' || grant === 'refresh_token' ? grant : 'invalid';
}

function answer(state: SimulatorState, params: TokenParams | string, kind: CallKind): TokenOutcome {
  if (typeof params === 'string') return oauthError('invalid_request', params);
  if (kind === 'authorization_code') return exchangeCode(state, params);
  if (kind === 'refresh_token') return refreshTokens(state, params);
  return params.grant_type === undefined
    ? oauthError('invalid_request', 'missing parameter grant_type')
    : oauthError(
        'unsupported_grant_type',
        'grant_type must be authorization_code or refresh_token',
      );
}

/** The handlers of POST /token: body parsers, the endpoint, and its answer to an unreadable body. */
export function tokenEndpoint(
  context: TokenEndpointContext,
): (RequestHandler | ErrorRequestHandler)[] {
  const { state, faults, closed } = context;

  const respond = (req: Request, res: Response, params: TokenParams | string): void => {
    const kind = callKind(params);
    state.calls[kind] += 1;
    if (typeof params !== 'string' && kind !== 'invalid') state.countCall(params.client_id, kind);
    const style = state.config.answerStyle;
    const produce = (): TokenOutcome => styledOutcome(style, answer(state, params, kind), kind);
    const fault = faults.take(kind);
    if (fault !== undefined) {
      answerWithFault(fault, { req, res, closed, produce, style });
      return;
    }
    const outcome = produce();
    sendJson(res, outcome.status, outcome.body);
  };

  return [
    express.urlencoded({ extended: false, limit: BODY_LIMIT }),
    express.json({ limit: BODY_LIMIT }),
    (req: Request, res: Response) => respond(req, res, collectTokenParams(req.query, req.body)),
    // A body that cannot be parsed (bad JSON, too large, unknown charset) is the client's mistake.
    (_error: unknown, req: Request, res: Response, _next: NextFunction) =>
      respond(req, res, 'the request body could not be parsed'),
  ];
}
