// The setup checks that need only platformLogin()'s options: a deployment that must not start. The
// options schema runs them (options.ts), so each refusal is a SetupError `ERR_PLATFORM_INVALID_OPTION`
// naming its option, like any other wrong option. The checks that need a request are
// entry-setup-checks.ts; those of the app around the package, `checkSetup()` (setup-checks.ts).

/** What the creation checks read of platformLogin()'s parsed options. */
export interface CreationCheckInput {
  authUrl: string;
  redirectUri: string;
  platformOrigins?: readonly string[] | undefined;
  api: { url?: string | undefined };
  /** `entry.context.mode`, when the app set one. */
  entry: { context?: { mode?: 'off' | 'report' | 'enforce' | undefined } | undefined };
}

/** An option the checks refuse, as the schema reports it. */
export interface CreationIssue {
  path: string[];
  message: string;
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
 * What production refuses: an `http://` platform URL (the client secret, codes and tokens would
 * cross the network in the clear; loopback hosts stay allowed, a sidecar or the simulator on the
 * same machine), and an entry left unchecked by default, open to login CSRF unless the app says so
 * with `entry.context.mode`. Elsewhere nothing is refused: the entry context then only reports, and
 * warns once (entry-context.ts).
 */
export function creationIssues(
  input: CreationCheckInput,
  production: boolean = process.env.NODE_ENV === 'production',
): CreationIssue[] {
  if (!production) return [];
  const issues: CreationIssue[] = [];
  const urls = [
    [['authUrl'], input.authUrl, 'client secret and the tokens'],
    [['api', 'url'], input.api.url, 'client secret and the tokens'],
    [['redirectUri'], input.redirectUri, 'entry code'],
  ] as const;
  for (const [path, value, what] of urls) {
    if (value === undefined) continue;
    const url = new URL(value);
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
      issues.push({
        path: [...path],
        message: `must be an https:// URL in production (NODE_ENV=production): over http:// the ${what} would cross the network in the clear. Plain http:// is allowed for loopback hosts only`,
      });
  }
  if (input.platformOrigins === undefined && input.entry.context?.mode === undefined)
    issues.push({
      path: ['platformOrigins'],
      message:
        "is required under NODE_ENV=production: without it any site can log a visitor into another player's account with an unused code (login CSRF). " +
        "List the origins of the platform's pages that open the game (e.g. ['https://platform.example']), " +
        "or set `entry: { context: { mode: 'report' } }` to run without the check on purpose",
    });
  return issues;
}
