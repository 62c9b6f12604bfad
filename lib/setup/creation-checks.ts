// The setup checks that need only platformLogin()'s options: a deployment that must not start,
// refused once at creation by platformLogin() (platform-login.ts), each as a SetupError
// `ERR_PLATFORM_INVALID_OPTION` naming the option. The checks that need a request are
// entry-setup-checks.ts; those of the app around the package, `checkSetup()` (setup-checks.ts).
import { invalidOption } from '../errors';

/** What the creation checks read of platformLogin()'s parsed options. */
export interface CreationCheckInput {
  authUrl: string;
  redirectUri: string;
  platformOrigins?: readonly string[] | undefined;
  api: { url?: string | undefined };
  /** `entry.context.mode`, when the app set one. */
  entry: { context?: { mode?: 'off' | 'report' | 'enforce' | undefined } | undefined };
}

/** Loopback hosts, where plain http never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    /^127(\.\d{1,3}){3}$/.test(host)
  );
}

/**
 * Refuses an `http://` platform URL in production: the client secret, codes and tokens would
 * cross the network in the clear. Loopback hosts stay allowed (a sidecar or the simulator on the
 * same machine), since that traffic never leaves it.
 */
export function checkPlatformUrls(
  urls: { authUrl: string; apiUrl?: string | undefined; redirectUri: string },
  production: boolean = process.env.NODE_ENV === 'production',
): void {
  if (!production) return;
  for (const name of ['authUrl', 'apiUrl', 'redirectUri'] as const) {
    const value = urls[name];
    if (value === undefined) continue;
    const url = new URL(value);
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      // The open API's base is given as `api.url`; the check receives it as `apiUrl`.
      const option = name === 'apiUrl' ? 'api.url' : name;
      throw invalidOption(
        `platformLogin(): \`${option}\` must be an https:// URL in production (NODE_ENV=production): over http:// the ` +
          (name === 'redirectUri' ? 'entry code' : 'client secret and the tokens') +
          ' would cross the network in the clear. Plain http:// is allowed for loopback hosts only.',
        option,
      );
    }
  }
}

const PRODUCTION_WITHOUT_ORIGINS =
  "platformLogin(): under NODE_ENV=production `platformOrigins` is required: without it any site can log a visitor into another player's " +
  "account with an unused code (login CSRF). List the origins of the platform's pages that open the game (e.g. ['https://platform.example']), " +
  "or set `entry: { context: { mode: 'report' } }` to run without the check on purpose.";

/**
 * Every check that needs only the options: what production refuses (the platform's URLs; an entry
 * left unchecked by default, open to login CSRF unless the app says so with `entry.context.mode`).
 * Throws the first refusal. (`embedded` or an `'enforce'` entry context without `platformOrigins`
 * are refused by the options schema itself; a store lacking a method of the contract, where its
 * engine is made: core/derived-engine.ts.)
 */
export function checkCreation(
  input: CreationCheckInput,
  production: boolean = process.env.NODE_ENV === 'production',
): void {
  checkPlatformUrls({ ...input, apiUrl: input.api.url }, production);
  // Elsewhere the entry context only reports, and warns once (entry-context.ts).
  if (
    production &&
    input.platformOrigins === undefined &&
    input.entry.context?.mode === undefined
  ) {
    throw invalidOption(PRODUCTION_WITHOUT_ORIGINS, 'platformOrigins');
  }
}
