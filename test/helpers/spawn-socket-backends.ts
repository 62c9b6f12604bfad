// Starts game backends running socket-backend-program.ts, sharing one Redis; talks to them as a
// browser would (enter, log out, open a WebSocket with the session cookie) and keeps every line
// they print.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import WebSocket from 'ws';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { TEST_REDIRECT_URI } from './test-app';
import { sessionCookieFrom, sessionIdFrom } from './session-cookie';
import { listeningPort, spawnOnSources, stopProcesses } from './on-sources';

export interface SocketProcess {
  url: string;
  child: ChildProcess;
  /** Everything it printed so far. */
  output: () => string;
}

export async function startSocketProcess(env: Record<string, string>): Promise<SocketProcess> {
  const child = spawnOnSources(join(__dirname, 'socket-backend-program.ts'), {
    env: { ...process.env, ...env },
  });
  let output = '';
  const keep = (chunk: Buffer): void => void (output += chunk.toString());
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const port = await listeningPort(child, 'socket process', () => `: ${output}`);
  return { url: `http://127.0.0.1:${port}`, child, output: () => output };
}

export const stopSocketProcesses = stopProcesses;

/** A logged-in browser: its session cookie (`name=value`) and session id. */
export interface Browser {
  cookie: string;
  sessionId: string;
}

/** Enters as `openId` through the process at `url`. */
export async function enterAs(
  url: string,
  sim: PlatformSimulator,
  openId: string,
): Promise<Browser> {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });
  const res = await request(url).get(`/platform/callback?code=${encodeURIComponent(code)}`);
  if (res.status !== 303) throw new Error(`entry failed with ${res.status}: ${res.text}`);
  return { cookie: sessionCookieFrom(res), sessionId: sessionIdFrom(res) };
}

/** A WebSocket client that keeps every frame and how it closed. */
export interface TestSocket {
  ws: WebSocket;
  frames: Array<Record<string, unknown>>;
  /** Resolves the close code and when it came (Date.now()). */
  closed: Promise<{ code: number; reason: string; at: number }>;
  /** Sends `{"type":"profile"}` and resolves the next profile (or error) frame. */
  profile(): Promise<Record<string, unknown>>;
}

/**
 * Opens `GET /ws` with `cookie` (and `headers`, e.g. the `Origin` a browser sends); resolves once
 * the hello frame came, or rejects with the HTTP status.
 */
export function openSocket(
  url: string,
  cookie?: string,
  headers: Record<string, string> = {},
): Promise<TestSocket> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, {
    headers: cookie === undefined ? headers : { ...headers, Cookie: cookie },
  });
  const frames: Array<Record<string, unknown>> = [];
  const waiting: Array<(frame: Record<string, unknown>) => void> = [];
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as Record<string, unknown>;
    frames.push(frame);
    if (frame.type !== 'hello') waiting.shift()?.(frame);
  });
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason), at: Date.now() })),
  );
  const socket: TestSocket = {
    ws,
    frames,
    closed,
    profile: () =>
      new Promise((resolve) => {
        waiting.push(resolve);
        ws.send(JSON.stringify({ type: 'profile' }));
      }),
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no hello within 3 s')), 3000);
    ws.once('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () =>
        reject(
          Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body }),
        ),
      );
    });
    ws.on('message', () => {
      if (frames.some((frame) => frame.type === 'hello')) {
        clearTimeout(timer);
        resolve(socket);
      }
    });
    ws.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
