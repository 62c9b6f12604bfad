// The options of platformLogin(): one strict schema, parsed once at creation. Each group is declared
// by the part it configures (client/, core/refresh-options.ts, entry/entry-options.ts,
// open-api/open-api-options.ts), which also derives its own settings from it; the types users see
// are the schema's input, documented field by field.
import { z } from 'zod';
import type { MeterProvider } from '@opentelemetry/api';
import { tokenStoreProblem, type TokenStore } from './core/token-store';
import { parseOptions, type OptionsSchema } from './util/parse-options';
import { invalidOption } from './errors';
import { credentialsShape, tokenClientTuningSchema } from './client/token-client-options';
import { refreshOptionsSchema } from './core/refresh-options';
import { entryOptionsSchema } from './entry/entry-options';
import { apiOptionsSchema } from './open-api/open-api-options';
import { sameSitePath } from './util/same-site-path';
import { originListSchema } from './cross-site/origins';
import { encryptionKeysSchema } from './stores/encryption-keys-schema';
import { isPlatformLogger, type PlatformLogger } from './observability/logger';
import type { AfterLoginHook } from './entry/after-login';
import {
  registrationIssues,
  registrationNameSchema,
  registrationSchema,
} from './registrations/registration-options';
import { creationIssues } from './setup/creation-checks';

const boolean = z.boolean({ error: 'must be a boolean' });

/** The quick start's handful first, then the tuning grouped by what it tunes. */
const platformLoginShape = {
  /**
   * The name of the registration `clientId`, `clientSecret` and `redirectUri` describe, as
   * `req.platformUser.registration` says it. Keep it first when adding `registrations`: records
   * that carry no registration are its own. Defaults to `'default'`.
   */
  registrationName: registrationNameSchema.default('default'),
  /**
   * Further registrations of the game on the platform (a mini-game, an app's webview): each
   * `{ name, clientId, clientSecret, redirectUri, platformOrigins? }`, its callback served at its
   * redirectUri's path (`login.callbackFor(name)`, or `login.callbacks` for all). A player is
   * joined across them by the platform's unionid. See docs/registrations.md. Defaults to `[]`.
   */
  registrations: z
    .array(registrationSchema, { error: 'must be an array of registrations' })
    .max(32)
    .default([]),
  /** Where token records live. Defaults to a `MemoryTokenStore` (one process only). */
  store: z
    .custom<TokenStore>((value) => typeof value === 'object' && value !== null, {
      error: 'must be a TokenStore (MemoryTokenStore, RedisTokenStore or your own)',
    })
    .superRefine((store, ctx) => {
      const problem = tokenStoreProblem(store);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  /**
   * Keys that seal token records (AES-256-GCM) before they reach the store, so your own store never
   * holds a token in the clear: `[{ id: 'k1', key }]`, each key 32 random bytes (`openssl rand
   * -base64 32`). The first key seals new writes; every key opens, so a new key goes first and the
   * old one stays second until records have been rewritten or expired. A RedisTokenStore seals with
   * its own `encryptionKeys`: give them there (the same keys here too are accepted, other keys are
   * refused). Defaults to none: a store of your own is then refused under `NODE_ENV=production` and
   * warned about elsewhere; a MemoryTokenStore, in this process's memory, needs none.
   */
  encryptionKeys: encryptionKeysSchema.optional(),
  /**
   * Origins of the platform's pages that open or frame the game, e.g. `['https://platform.example']`.
   * Read by `entry.context` and `frameAncestors()`; required by both and by `embedded`. Defaults to none.
   */
  platformOrigins: originListSchema.optional(),
  /**
   * Origins of the game's own pages on other hosts (a front end on a CDN) allowed to send
   * state-changing requests to `csrfProtection()` routes and `logout()`. Defaults to none: same
   * origin only.
   */
  gameOrigins: originListSchema.optional(),
  /**
   * The platform shows the game in a cross-site iframe: an entry lands through a cookie check
   * (`?cookie_check=1` on the callback) that shows a diagnostic page when the browser refused the
   * session cookie, and framed entries pass the entry context. Defaults to `false`.
   */
  embedded: boolean.default(false),
  /** Where a successful entry lands (303). A path on this site. Defaults to `'/'`. */
  successRedirect: sameSitePath.default('/'),
  /**
   * Lifetime of a session in the session store, in seconds (at least 60), used when the session
   * cookie has no `maxAge` (connect-redis then keeps sessions for its `ttl`, 86400 by default). A
   * session cookie with `maxAge` wins. Token records and per-player index entries never outlive it;
   * a session kept alive by activity keeps its record. Defaults to `86400`.
   */
  sessionMaxAgeSeconds: z
    .number({ error: 'must be an integer number of seconds, at least 60' })
    .int()
    .min(60)
    .default(86_400),
  /**
   * `true`: the package answers its errors itself (JSON for API clients, a small HTML page for
   * browsers). `false`: errors go to `next(err)` for the app's error middleware. Defaults to `true`.
   */
  handleErrors: boolean.default(true),
  /**
   * A pino-compatible logger (`debug/info/warn/error(fields, message)`). Defaults to
   * defaultLogger(): warnings and errors (setup mistakes, 5xx answers) on the console, debug and
   * info lines only with `DEBUG=express-platform-login:*`.
   */
  logger: z
    .custom<PlatformLogger>(isPlatformLogger, {
      error: 'must have debug, info, warn and error methods (pino-compatible)',
    })
    .optional(),
  /**
   * OpenTelemetry MeterProvider for the metrics. Defaults to the global one (a no-op until an SDK
   * is registered).
   */
  meterProvider: z
    .custom<MeterProvider>(
      (value) => typeof (value as { getMeter?: unknown } | null)?.getMeter === 'function',
      { error: 'must be an OpenTelemetry MeterProvider' },
    )
    .optional(),
  /**
   * Runs after every successful entry, once the session holds the login and before the redirect:
   * `({ req, res, player }) => …` with the player's `user`, `token()` and `fetch()`. Resolve `false`
   * to refuse the entry (403 `entry_refused`, no login kept); answer yourself to replace the
   * redirect. Defaults to none.
   */
  afterLogin: z
    .custom<AfterLoginHook>((value) => typeof value === 'function', {
      error: 'must be a function ({ req, res, player }) => boolean | void (or a promise of it)',
    })
    .optional(),
  /** How the token endpoint client talks to the platform (timeouts, retries, encoding, fetch). Defaults to `{}`. */
  tokenClient: tokenClientTuningSchema.prefault({}) as z.ZodPrefault<
    typeof tokenClientTuningSchema
  >,
  /** When and how a login's access token is refreshed. Defaults to `{}`. */
  refresh: refreshOptionsSchema.prefault({}) as z.ZodPrefault<typeof refreshOptionsSchema>,
  /** The entry (the callback the platform sends players to): its checks and limits. Defaults to `{}`. */
  entry: entryOptionsSchema.prefault({}) as z.ZodPrefault<typeof entryOptionsSchema>,
  /** The platform's open API, called by `req.platformFetch()`, sockets and jobs. Defaults to `{}`. */
  api: apiOptionsSchema.prefault({}) as z.ZodPrefault<typeof apiOptionsSchema>,
};

/**
 * The schema of platformLogin()'s options. Typed as the shapes it joins, and each group as its own
 * schema (the `as` above), so the built types point at the documented fields (see OptionsSchema).
 */
export const platformLoginSchema: OptionsSchema<
  typeof credentialsShape & typeof platformLoginShape
> = z.strictObject({ ...credentialsShape, ...platformLoginShape }).superRefine((config, ctx) => {
  // Checks across options read values their own schemas accepted: a wrong field is said alone.
  if (ctx.issues.length > 0) return;
  for (const issue of [...registrationIssues(config), ...creationIssues(config)])
    ctx.addIssue({ code: 'custom', ...issue });
  // Options that only make sense together: said at creation, not on the first entry.
  if (config.platformOrigins !== undefined) return;
  const needs = (why: string, example: string) =>
    ctx.addIssue({
      code: 'custom',
      path: ['platformOrigins'],
      message: `is required when ${why}, e.g. ['https://platform.example']${example}`,
    });
  if (config.embedded)
    needs('`embedded` is true', ': it limits which pages may frame the game (frame-ancestors)');
  // Without origins the entry context defaults to 'report' (with a start-up warning).
  if (config.entry.context?.mode === 'enforce')
    needs(
      "`entry.context.mode` is 'enforce'",
      ": the origins of the platform's pages that open the game",
    );
});

/** Options of {@link platformLogin}: the quick start's handful, then the tuning grouped by what it tunes. */
export type PlatformLoginOptions = z.input<typeof platformLoginSchema>;

/** Options after parsing, defaults applied: each part takes its own group. */
export type PlatformLoginConfig = z.output<typeof platformLoginSchema>;

/** The flat options of 0.x before the grouping, and where each one went (said when one is given). */
const MOVED: Readonly<Record<string, string>> = {
  refreshSkewSeconds: 'refresh.skewSeconds',
  refreshAheadFraction: 'refresh.aheadFraction',
  refreshFailureCooldownSeconds: 'refresh.failureCooldownSeconds',
  refreshTokenLifetimeSeconds: 'refresh.tokenLifetimeSeconds',
  retryAfterSeconds: 'refresh.retryAfterSeconds',
  entryContext: 'entry.context',
  entryFailureLimit: 'entry.failureLimit',
  entryFailureWindowSeconds: 'entry.failureWindowSeconds',
  entryFailureIpv6Subnet: 'entry.ipv6Subnet',
  maxExchangesInFlight: 'entry.maxExchangesInFlight',
  maxCodeLength: 'entry.maxCodeLength',
  codeClaimTtlSeconds: 'entry.codeClaimTtlSeconds',
  apiUrl: 'api.url',
  apiUrls: 'api.urls',
  apiTimeoutMs: 'api.timeoutMs',
  accessTokenPlacement: 'api.tokenPlacement',
  accessTokenQueryParameter: 'api.tokenQueryParameter',
};

/** Validates the options of platformLogin() once, at creation. */
export function parsePlatformLoginOptions(options: PlatformLoginOptions): PlatformLoginConfig {
  if (typeof options === 'object' && options !== null) {
    const moved = Object.keys(options).filter((key) => Object.hasOwn(MOVED, key));
    if (moved.length > 0) {
      const where = moved.map((key) => `\`${key}\` moved to \`${MOVED[key]}\``).join('; ');
      throw invalidOption(`platformLogin(): ${where} (see CHANGELOG.md).`, moved[0]);
    }
  }
  return parseOptions(platformLoginSchema, options, 'platformLogin()');
}
