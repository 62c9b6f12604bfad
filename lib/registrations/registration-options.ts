// The game's registrations on the platform: the first is given by platformLogin()'s own
// `clientId`, `clientSecret` and `redirectUri` (named `registrationName`), further ones under
// `registrations`. Each has its credentials, its redirectUri (where its callback is served) and,
// where they differ, its platform origins. See docs/registrations.md.
import { z } from 'zod';
import { credentialsShape } from '../client/token-client-options';
import { originListSchema } from '../cross-site/origins';

/** A registration's name: short, safe in a URL, a log line and an index key. */
export const registrationNameSchema = z
  .string({ error: 'must be 1 to 64 letters, digits, `-` or `_`' })
  .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1 to 64 letters, digits, `-` or `_`' });

/** One further registration, as `registrations[]` takes it. */
export const registrationSchema = z.strictObject({
  /** Its name, unique: records and `req.platformUser.registration` carry it. */
  name: registrationNameSchema,
  /** Its `client_id` on the platform. */
  clientId: credentialsShape.clientId,
  /** Its `client_secret`. Kept on the server; never logged. */
  clientSecret: credentialsShape.clientSecret,
  /** Its registered `redirect_uri`; its callback is served at this URL's path. */
  redirectUri: credentialsShape.redirectUri,
  /** The origins of the platform's pages that open it, when they differ from `platformOrigins`. */
  platformOrigins: originListSchema.optional(),
});

/** A registration with everything it needs; `stored` is what its records carry (absent: the first). */
export type Registration = z.output<typeof registrationSchema> & { stored: string | undefined };

/** The registrations of one platformLogin(), the first one first. */
export function registrationsOf(
  config: Omit<Registration, 'name' | 'stored'> & {
    registrationName: string;
    registrations: readonly z.output<typeof registrationSchema>[];
  },
): Registration[] {
  const { registrationName: name, clientId, clientSecret, redirectUri, platformOrigins } = config;
  return [
    { name, stored: undefined, clientId, clientSecret, redirectUri, platformOrigins },
    ...config.registrations.map((registration) => ({
      ...registration,
      stored: registration.name,
      platformOrigins: registration.platformOrigins ?? platformOrigins,
    })),
  ];
}

/** Issues with the registrations taken together: names and callback paths must not repeat. */
export function registrationIssues(
  config: Pick<Registration, 'redirectUri'> & {
    registrationName: string;
    registrations: readonly Pick<Registration, 'name' | 'redirectUri'>[];
  },
): { path: (string | number)[]; message: string }[] {
  const issues: ReturnType<typeof registrationIssues> = [];
  const names = new Set([config.registrationName]);
  const paths = new Set([pathOf(config.redirectUri)]);
  config.registrations.forEach((registration, index) => {
    if (names.has(registration.name))
      issues.push({ path: ['registrations', index, 'name'], message: 'must not repeat a name' });
    names.add(registration.name);
    const path = pathOf(registration.redirectUri);
    if (paths.has(path))
      issues.push({
        path: ['registrations', index, 'redirectUri'],
        message: "must have a path of its own: each registration's callback is served there",
      });
    paths.add(path);
  });
  return issues;
}

/** The path a callback is served at, as Express matches it (trailing slashes and case aside). */
export const pathOf = (redirectUri: string): string =>
  (new URL(redirectUri).pathname.replace(/\/+$/, '') || '/').toLowerCase();
