// One attempt at the token endpoint: sent over node:http, or through the app's fetch when it passed
// one, under one deadline and one byte cap; every failure leaves as a typed error.
import { invalidTokenResponse, PlatformLoginError, tokenRequestFailed } from '../errors';
import { sendOverFetch } from './fetch-transport';
import { sendOverHttp } from './http-transport';
import { DEADLINE, type TokenRequest, type TransportLimits } from './token-transport';

/** The limits of one attempt and the fetch to make it with, if the app passed one. */
export interface TokenRequestLimits extends TransportLimits {
  fetch?: typeof fetch | undefined;
  /** The configured endpoint, without any query: the only URL an error message may name. */
  tokenEndpoint: string;
}

/**
 * Sends one token request and collects its answer within `timeoutMs`. Rejects with
 * PlatformError `ERR_PLATFORM_TIMEOUT`, `ERR_PLATFORM_NETWORK`, or `ERR_PLATFORM_INVALID_RESPONSE` for a body
 * beyond `maxResponseBytes`; whatever the status, an answer that arrived in time resolves, with
 * its Retry-After header for the retry decision.
 */
export async function sendTokenRequest(request: TokenRequest, limits: TokenRequestLimits) {
  try {
    const { body, ...answer } =
      limits.fetch === undefined
        ? await sendOverHttp(request, limits)
        : await sendOverFetch(request, limits.fetch, limits);
    if (body === undefined) {
      throw invalidTokenResponse(
        `The token endpoint's answer to the ${request.grant} request is larger than ` +
          `maxResponseBytes (${limits.maxResponseBytes} bytes); reading was stopped there.`,
        { httpStatus: answer.status },
      );
    }
    return { ...answer, body };
  } catch (error) {
    if (error instanceof PlatformLoginError) throw error;
    const { tokenEndpoint, timeoutMs } = limits;
    throw tokenRequestFailed(
      { tokenEndpoint, grant: request.grant, timeoutMs },
      error === DEADLINE,
      error,
    );
  }
}
