// The client of the platform's token endpoint (POST `${authUrl}/token`): exchanges an entry code and
// refreshes tokens, each answer validated into a TokenSet. Usable on its own, without Express.
import type { TokenSet } from './token-set';
import {
  parseTokenClientOptions,
  type PlatformTokenClientOptions,
  type TokenClientConfig,
} from './token-client-options';
import { interpretTokenAnswer, type TokenGrant } from './token-response';
import { sendTokenRequest, type TokenRequestLimits } from './token-request';
import type { TokenRequest } from './token-transport';
import { parseRetryAfterMs, retryDelayMs, type FailedAttempt } from './retry';

/** A request's parameters, in the order they are sent. */
type TokenParameters = Readonly<Record<string, string>>;
type AttemptOutcome = { tokenSet: TokenSet } | FailedAttempt;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const ACCEPT_JSON = Object.freeze({ accept: 'application/json' });
const FORM_HEADERS = Object.freeze({
  ...ACCEPT_JSON,
  'content-type': 'application/x-www-form-urlencoded',
});
const JSON_HEADERS = Object.freeze({ ...ACCEPT_JSON, 'content-type': 'application/json' });

function requireToken(value: unknown, call: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`${call} needs a non-empty string.`);
  }
}

/**
 * Talks to `${authUrl}/token`. `exchangeCode` makes exactly one attempt (a sent code may already be
 * consumed, so it is never sent twice); `refresh` retries transient failures with jittered backoff.
 */
export class PlatformTokenClient {
  /** The token endpoint: `authUrl` without trailing slashes, plus `/token`. */
  readonly tokenEndpoint: string;
  readonly #config: TokenClientConfig;
  readonly #limits: TokenRequestLimits;
  readonly #clientParameters: TokenParameters;
  readonly #refreshClientParameters: TokenParameters;

  /** Parses the options once; throws a SetupError (`ERR_PLATFORM_INVALID_OPTION`) naming a wrong or unknown option. */
  constructor(options: PlatformTokenClientOptions) {
    const config = parseTokenClientOptions(options);
    this.#config = config;
    this.tokenEndpoint = `${config.authUrl.replace(/\/+$/, '')}/token`;
    this.#limits = { ...config, tokenEndpoint: this.tokenEndpoint };
    // redirect_uri goes out exactly as configured: the platform compares it with the registration.
    this.#clientParameters = {
      client_id: config.clientId,
      client_secret: config.clientSecret,
      redirect_uri: config.redirectUri,
    };
    this.#refreshClientParameters = config.sendClientCredentialsOnRefresh
      ? this.#clientParameters
      : {};
  }

  /**
   * The longest one `refresh()` can take, in milliseconds: every attempt running into `timeoutMs`,
   * plus the longest wait before each retry. A lock held for a refresh must outlive it.
   */
  get longestRefreshMs(): number {
    const { timeoutMs, refreshRetries, maxRetryDelayMs } = this.#config;
    return timeoutMs * (refreshRetries + 1) + maxRetryDelayMs * refreshRetries;
  }

  /**
   * Exchanges an entry code for tokens (grant_type=authorization_code). One attempt only, never
   * retried once sent.
   * Rejects with a PlatformError: an OAuth error (`ERR_PLATFORM_INVALID_GRANT` for a used or expired
   * code, …), `ERR_PLATFORM_INVALID_RESPONSE`, `ERR_PLATFORM_TIMEOUT` or `ERR_PLATFORM_NETWORK`.
   */
  async exchangeCode(code: string): Promise<TokenSet> {
    requireToken(code, 'PlatformTokenClient.exchangeCode(code)');
    const parameters = { grant_type: 'authorization_code', code, ...this.#clientParameters };
    const outcome = await this.#attempt(this.#bodyRequest('authorization_code', parameters), code);
    if ('tokenSet' in outcome) return outcome.tokenSet;
    throw outcome.error;
  }

  /**
   * Refreshes tokens (grant_type=refresh_token). Network errors, timeouts, 5xx and 429 (when its
   * Retry-After fits `maxRetryDelayMs`) are retried up to `refreshRetries` times; `invalid_grant`,
   * `invalid_client` and other refusals never are. A response without `refresh_token` keeps the one
   * sent.
   */
  async refresh(refreshToken: string): Promise<TokenSet> {
    requireToken(refreshToken, 'PlatformTokenClient.refresh(refreshToken)');
    const parameters = {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      ...this.#refreshClientParameters,
    };
    const request =
      this.#config.refreshParameterPlacement === 'query'
        ? this.#queryRequest('refresh_token', parameters)
        : this.#bodyRequest('refresh_token', parameters);
    for (let attempt = 0; ; attempt += 1) {
      const outcome = await this.#attempt(request, refreshToken, refreshToken, attempt);
      if ('tokenSet' in outcome) return outcome.tokenSet;
      const delay = retryDelayMs(outcome, attempt, this.#config);
      if (delay === undefined) throw outcome.error;
      await sleep(delay);
    }
  }

  #bodyRequest(grant: TokenGrant, parameters: TokenParameters): TokenRequest {
    const json = this.#config.bodyEncoding === 'json';
    return {
      grant,
      url: this.tokenEndpoint,
      headers: json ? JSON_HEADERS : FORM_HEADERS,
      body: json ? JSON.stringify(parameters) : new URLSearchParams(parameters).toString(),
    };
  }

  #queryRequest(grant: TokenGrant, parameters: TokenParameters): TokenRequest {
    const query = new URLSearchParams(parameters).toString();
    return { grant, url: `${this.tokenEndpoint}?${query}`, headers: ACCEPT_JSON, body: undefined };
  }

  /**
   * One attempt; its failure is returned (with any Retry-After) for the retry decision.
   * `grantSecret` (the code or refresh token sent) is kept out of the error, as is the client secret.
   */
  async #attempt(
    request: TokenRequest,
    grantSecret: string,
    previousRefreshToken?: string,
    /** How many times this request was sent before (0 for the first attempt). */
    resendCount = 0,
  ): Promise<AttemptOutcome> {
    // expiresAt counts from the moment of sending: the token's life began before the answer came.
    const startedAt = Date.now();
    const report = (error: unknown, httpStatus?: number): void => {
      try {
        this.#config.onAttempt?.({
          grant: request.grant,
          resendCount,
          outcome:
            error === undefined
              ? 'ok'
              : String((error as { code?: unknown } | null)?.code ?? 'ERR_UNKNOWN'),
          startedAt,
          durationMs: Date.now() - startedAt,
          tokenEndpoint: this.tokenEndpoint,
          httpStatus,
        });
      } catch {
        // An observer's failure must never change the outcome of a token request.
      }
    };
    let answer;
    try {
      answer = await sendTokenRequest(request, this.#limits);
    } catch (error) {
      report(error);
      return { error };
    }
    const retryAfterMs = parseRetryAfterMs(answer.retryAfter, Date.now());
    try {
      const tokenSet = interpretTokenAnswer(answer, startedAt, {
        grant: request.grant,
        maxExpiresInSeconds: this.#config.maxExpiresInSeconds,
        previousRefreshToken,
        secretsSent: [grantSecret, this.#config.clientSecret],
        answers: this.#config,
        tokenEndpoint: this.tokenEndpoint,
        // On the error, so the refresh coordination can hold every process back that long.
        platformRetryAfterSeconds:
          retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000),
      });
      report(undefined, answer.status);
      return { tokenSet };
    } catch (error) {
      report(error, answer.status);
      return { error, retryAfterMs };
    }
  }
}
