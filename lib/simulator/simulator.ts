// PlatformSimulator: the running simulated platform and the knobs tests turn on it.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSimulatorApp } from './simulator-app';
import { resolveEntry } from './player-entry';
import { FaultQueue, type FaultOptions, type SimulatorFault } from './faults';
import { parseOptions } from '../util/parse-options';
import { optionsSchema, type SimulatorOptions } from './options';
import { SimulatorState, type SimulatorCallCounts } from './platform-state';

/** The address clients should use for a listening host (a wildcard address is reached over loopback). */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** A running simulated platform: token endpoint at `url + '/token'`, `/userinfo`, and the lobby at `url + '/'`. */
export class PlatformSimulator {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** Live counts of POST /token calls by grant_type (or invalid) and of GET /userinfo; faulted calls count too. */
  readonly calls: SimulatorCallCounts;

  private closing: Promise<void> | undefined;

  private constructor(
    private readonly state: SimulatorState,
    private readonly faults: FaultQueue,
    private readonly closer: AbortController,
    private readonly server: Server,
  ) {
    const { port } = server.address() as AddressInfo;
    this.url = `http://${urlHost(state.config.host)}:${port}`;
    this.calls = state.calls;
  }

  /** Starts a simulator; the same as startSimulator(). */
  static async start(options?: SimulatorOptions): Promise<PlatformSimulator> {
    const config = parseOptions(optionsSchema, options, 'startSimulator');
    const state = new SimulatorState(config);
    const faults = new FaultQueue();
    const closer = new AbortController();
    const server = createServer(createSimulatorApp({ state, faults, closed: closer.signal }));
    await once(server.listen(config.port, config.host), 'listening');
    return new PlatformSimulator(state, faults, closer, server);
  }

  /**
   * How many refresh calls presented a refresh token that a rotation had already retired (a
   * platform that treats reuse as theft would revoke the grant).
   */
  get retiredTokenReuses(): number {
    return this.state.retiredTokenReuses;
  }

  /** Sets every call count back to 0 (the `calls` object stays the same). */
  resetCalls(): void {
    for (const key of Object.keys(this.calls) as (keyof SimulatorCallCounts)[]) this.calls[key] = 0;
    this.state.callsByClient.clear();
  }

  /** Withholds `unionid` from code exchanges (it comes with refreshes only), or stops doing so. */
  setUnionIdOnRefreshOnly(on: boolean): void {
    if (typeof on !== 'boolean')
      throw new TypeError('setUnionIdOnRefreshOnly: pass true or false.');
    this.state.config.unionIdOnRefreshOnly = on;
  }

  /** Gives a player another unionid from now on, as a platform that re-binds an account would. */
  setUnionId(openId: string, unionId: string): void {
    const player = this.state.findPlayer(openId);
    if (player === undefined) throw new TypeError(`setUnionId: no player ${openId}.`);
    player.unionId = unionId;
  }

  /** Refresh calls refused because they carried another client's credentials than the grant's. */
  get foreignClientRefreshes(): number {
    return this.state.foreignClientRefreshes;
  }

  /** POST /token calls that carried `client_id` (every call, faulted ones too), by grant_type. */
  callsOfClient(clientId: string): { authorization_code: number; refresh_token: number } {
    return { authorization_code: 0, refresh_token: 0, ...this.state.callsByClient.get(clientId) };
  }

  /**
   * Issues a code as the platform appends it to the redirect_uri. Defaults: the first player, the
   * first client, and `defaultRedirectUri` or the client's first registered one (none: any
   * redirect_uri is accepted at the exchange).
   */
  issueCode(options: { openId?: string; clientId?: string; redirectUri?: string } = {}): string {
    const entry = resolveEntry(this.state, options);
    if (typeof entry === 'string') throw new TypeError(`issueCode: ${entry}.`);
    return this.state.issueCode(entry.clientId, entry.openId, entry.redirectUri);
  }

  /** URL of GET /enter, which issues a code and 302s the browser to `redirect_uri?code=…`. */
  enterUrl(options: { openId?: string; redirectUri?: string; clientId?: string } = {}): string {
    const query = new URLSearchParams();
    if (options.openId !== undefined) query.set('open_id', options.openId);
    if (options.clientId !== undefined) query.set('client_id', options.clientId);
    if (options.redirectUri !== undefined) query.set('redirect_uri', options.redirectUri);
    const search = query.toString();
    return `${this.url}/enter${search === '' ? '' : `?${search}`}`;
  }

  /** Makes POST /token misbehave; faults apply in order of injection, each call takes the first that matches. */
  injectFault(fault: SimulatorFault, options?: FaultOptions): void {
    this.faults.inject(fault, options);
  }

  /** Removes every injected fault. */
  clearFaults(): void {
    this.faults.clear();
  }

  /** Switches refresh-token rotation: on, each refresh returns a new refresh token and the old one is rejected. */
  setRotation(on: boolean): void {
    if (typeof on !== 'boolean') throw new TypeError('setRotation: pass true or false.');
    this.state.config.rotateRefreshTokens = on;
  }

  /** Lifetime (and `expires_in`) of access tokens issued or renewed from now on. */
  setAccessTokenLifetime(seconds: number): void {
    if (!Number.isInteger(seconds) || seconds < 1) {
      throw new TypeError('setAccessTokenLifetime: `seconds` must be a whole number, at least 1.');
    }
    this.state.config.accessTokenLifetimeSeconds = seconds;
  }

  /** Moves simulated time forward: codes and tokens expire as if `seconds` had passed. */
  advanceClock(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) {
      throw new TypeError('advanceClock: `seconds` must be a number of seconds, 0 or more.');
    }
    this.state.advanceClock(seconds);
  }

  /** Simulated time in epoch milliseconds. */
  now(): number {
    return this.state.now();
  }

  /** Refresh tokens of one player (or of all) become invalid: refreshing answers invalid_grant. */
  revokeRefreshTokens(openId?: string): void {
    this.state.revokeRefreshTokens(openId);
  }

  /** Stops the server: every connection is closed, hung ones too, and pending delayed answers dropped. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.closer.abort();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }
}

/** Starts a simulated platform on `host:port` (default 127.0.0.1 and a free port). */
export function startSimulator(options?: SimulatorOptions): Promise<PlatformSimulator> {
  return PlatformSimulator.start(options);
}
