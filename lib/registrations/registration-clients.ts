// A refresh goes to the token client of the registration its record came through, and to no
// other: a record of a registration no longer in the options is refused (reauth_required, the
// record deleted by the refresh coordinator), never refreshed with another registration's pair.
import { LoginRequiredError } from '../errors';
import type { Refresher } from '../core/refresh';
import type { ReceivedTokens, TokenRecord } from '../core/token-record';
import type { PlatformTokenClient } from '../client/token-client';

/** The refresher over every registration's client; `clients` keyed by the records' `registration`. */
export function registrationRefresher(
  clients: ReadonlyMap<string | undefined, Pick<PlatformTokenClient, 'refresh'>>,
): Refresher {
  return {
    refresh(refreshToken: string, record: TokenRecord): Promise<ReceivedTokens> {
      const client = clients.get(record.registration);
      if (client === undefined) return Promise.reject(registrationRemoved(record.registration));
      return client.refresh(refreshToken);
    },
  };
}

/** The answer to a login whose registration is no longer configured: the player enters again. */
const registrationRemoved = (name: string | undefined): LoginRequiredError =>
  new LoginRequiredError(
    `This login came through the registration '${String(name)}', which is no longer in platformLogin()'s options: the player must enter the game again.`,
    { code: 'ERR_PLATFORM_REAUTH_REQUIRED' },
  );
