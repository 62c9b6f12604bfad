// Requests the simulator tests send over real HTTP: a token call in each parameter placement or
// answered raw, and the shortcuts the state-table tests repeat (exchange a code, refresh, /userinfo).
import {
  DEMO_CLIENT_ID,
  DEMO_CLIENT_SECRET,
  type PlatformSimulator,
} from 'express-platform-login/simulator';

/** Where the parameters of a token request go. */
export type Placement = 'form' | 'json' | 'query';

/** What a test looks at in an answer. */
export interface TokenAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** A redirect_uri the tests register and send. */
export const REDIRECT_URI = 'http://127.0.0.1:3000/platform/callback';

/** Where the requests go: a simulator started in the test, or one run by the CLI at that URL. */
export type SimulatorAddress = Pick<PlatformSimulator, 'url'>;

/** The parameters of a code exchange as the demo client with REDIRECT_URI (each can be overridden). */
export function exchangeParams(
  code: string,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    grant_type: 'authorization_code',
    client_id: DEMO_CLIENT_ID,
    client_secret: DEMO_CLIENT_SECRET,
    code,
    redirect_uri: REDIRECT_URI,
    ...overrides,
  };
}

/** POST /token with `params` in a form body, answered raw: a fault's answer may not be JSON. */
export function postTokenForm(
  simulator: SimulatorAddress,
  params: Record<string, string>,
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`${simulator.url}/token`, {
    method: 'POST',
    body: new URLSearchParams(params),
    ...init,
  });
}

/** POST /token with `params` in a form body, a JSON body or the query string. */
export async function postToken(
  simulator: SimulatorAddress,
  params: Record<string, string>,
  placement: Placement = 'form',
): Promise<TokenAnswer> {
  const url = new URL(`${simulator.url}/token`);
  const init: RequestInit = { method: 'POST' };
  if (placement === 'form') {
    init.body = new URLSearchParams(params);
  } else if (placement === 'json') {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = JSON.stringify(params);
  } else {
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  }
  const response = await fetch(url, init);
  const body = (await response.json()) as Record<string, unknown>;
  return { status: response.status, headers: response.headers, body };
}

/** Exchanges `code` as the demo client with REDIRECT_URI (each can be overridden). */
export function exchange(
  simulator: SimulatorAddress,
  code: string,
  overrides: Record<string, string> = {},
  placement: Placement = 'form',
): Promise<TokenAnswer> {
  return postToken(simulator, exchangeParams(code, overrides), placement);
}

/** Issues a code for `openId` (default the first player) and exchanges it, whatever the answer. */
export function exchangeNewCode(
  simulator: PlatformSimulator,
  openId?: string,
): Promise<TokenAnswer> {
  const code = simulator.issueCode({ redirectUri: REDIRECT_URI, ...(openId ? { openId } : {}) });
  return exchange(simulator, code);
}

/** Issues a code for `openId` (default the first player) and exchanges it; fails the test unless it works. */
export async function login(
  simulator: PlatformSimulator,
  openId?: string,
): Promise<Record<string, unknown>> {
  const answer = await exchangeNewCode(simulator, openId);
  if (answer.status !== 200)
    throw new Error(`login failed: ${answer.status} ${String(answer.body.error)}`);
  return answer.body;
}

/** Refreshes with `refreshToken`, with or without client credentials. */
export function refresh(
  simulator: SimulatorAddress,
  refreshToken: unknown,
  extra: Record<string, string> = {},
  placement: Placement = 'form',
): Promise<TokenAnswer> {
  return postToken(
    simulator,
    { grant_type: 'refresh_token', refresh_token: String(refreshToken), ...extra },
    placement,
  );
}

/** GET /userinfo with a Bearer token; returns the status and JSON body. */
export async function userinfo(
  simulator: SimulatorAddress,
  accessToken: unknown,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${simulator.url}/userinfo`, {
    headers: { Authorization: `Bearer ${String(accessToken)}` },
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}
