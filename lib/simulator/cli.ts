#!/usr/bin/env node
// Command-line entry: `express-platform-login-simulator --port 4000` runs the simulated platform
// until Ctrl+C or SIGTERM.
import { parseArgs } from 'node:util';
import { DEMO_CLIENT_ID, DEMO_CLIENT_SECRET } from './options';
import { startSimulator, type PlatformSimulator } from './simulator';
import { SIMULATOR_ANSWER_STYLES, type SimulatorAnswerStyle } from './answer-style';

const USAGE = `Usage: express-platform-login-simulator [options]

Runs a simulated game platform: an OAuth 2.0 token endpoint (POST /token), an open-API stand-in
(GET /userinfo) and a lobby page (GET /) where you pick a demo player and enter your game.

Options:
  --port <n>                    port to listen on (default 4000; 0 picks a free one)
  --host <address>              address to listen on (default 127.0.0.1)
  --access-token-lifetime <s>   access token lifetime in seconds, sent as expires_in (default 7200)
  --rotate                      issue a new refresh token on every refresh; the old one is rejected
  --answer-style <style>        how POST /token answers: oauth (RFC 6749 errors, the default),
                                errcode (HTTP 200 with {errcode, errmsg} on failure) or envelope
                                (fields inside data, numbers as strings, refresh_expires_in)
  --redirect-uri <url>          where "Enter game" sends the browser when the lobby URL has no
                                ?redirect_uri= (e.g. http://localhost:3000/platform/callback)
  --client <id>:<secret>        a registered client, once per registration of the game (the first
                                one first; default: the demo client); the lobby URL's ?client_id=
                                picks one. A player's open_id is <id>.<open_id> under all but the
                                first, their unionid the same under all (docs/registrations.md)
  --help                        print this help

Demo client: client_id ${DEMO_CLIENT_ID}, client_secret ${DEMO_CLIENT_SECRET} (development only).
`;

/** A whole number from the command line, or a message naming the flag. */
function wholeNumber(flag: string, value: string): number {
  if (/^\d+$/.test(value)) return Number(value);
  throw new TypeError(`--${flag} must be a whole number, got "${value}".`);
}

/** A `--client id:secret` flag, or a message saying its form. */
function clientOf(value: string): { clientId: string; clientSecret: string } {
  const at = value.indexOf(':');
  if (at > 0 && at < value.length - 1)
    return { clientId: value.slice(0, at), clientSecret: value.slice(at + 1) };
  throw new TypeError(`--client must be <client_id>:<client_secret>, got "${value}".`);
}

/** The `--answer-style` flag, or a message naming the styles. */
function answerStyleOf(value: string): SimulatorAnswerStyle {
  const style = SIMULATOR_ANSWER_STYLES.find((known) => known === value);
  if (style !== undefined) return style;
  const styles = SIMULATOR_ANSWER_STYLES.join(', ');
  throw new TypeError(`--answer-style must be one of ${styles}, got "${value}".`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '4000' },
      host: { type: 'string', default: '127.0.0.1' },
      'access-token-lifetime': { type: 'string', default: '7200' },
      rotate: { type: 'boolean', default: false },
      'answer-style': { type: 'string', default: 'oauth' },
      'redirect-uri': { type: 'string' },
      client: { type: 'string', multiple: true },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help === true) {
    process.stdout.write(USAGE);
    return;
  }

  const clients = (values.client ?? [`${DEMO_CLIENT_ID}:${DEMO_CLIENT_SECRET}`]).map(clientOf);
  const simulator: PlatformSimulator = await startSimulator({
    port: wholeNumber('port', values.port),
    host: values.host,
    accessTokenLifetimeSeconds: wholeNumber(
      'access-token-lifetime',
      values['access-token-lifetime'],
    ),
    rotateRefreshTokens: values.rotate,
    answerStyle: answerStyleOf(values['answer-style']),
    defaultRedirectUri: values['redirect-uri'],
    clients,
  });
  process.stdout.write(
    `Platform simulator running.\n` +
      `  Lobby (pick a player, enter the game): ${simulator.url}/\n` +
      `  Token endpoint: ${simulator.url}/token   Open API: ${simulator.url}/userinfo\n` +
      `  Clients: ${clients.map((client) => client.clientId).join(', ')} (see --help)\n` +
      `Press Ctrl+C to stop.\n`,
  );

  const stop = (signal: NodeJS.Signals): void => {
    process.stdout.write(`Received ${signal}, stopping.\n`);
    void simulator.close();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `express-platform-login-simulator: ${message}\nRun with --help for usage.\n`,
  );
  process.exitCode = 1;
});
