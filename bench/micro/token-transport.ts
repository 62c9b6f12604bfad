// What one code exchange costs the app process's CPU over each transport of PlatformTokenClient:
// node:http (the default) and fetch (`tokenClient.fetch: globalThis.fetch`). The token endpoint runs
// in a child process, so the CPU measured (process.cpuUsage) is the client's alone; the two
// variants alternate, 16 exchanges in flight, and the figure is the median over rounds.
// Run: node -r esbuild-register bench/micro/token-transport.ts (ROUNDS=n)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { PlatformTokenClient } from '../../lib/client/token-client';
import { inFlight } from '../lib/load';
import { alternatingRuns } from '../lib/rounds';
import { median } from '../lib/stats';

const ROUNDS = Number(process.env.ROUNDS ?? 9);
const PER_ROUND = 4000;
const IN_FLIGHT = 16;

/** A token endpoint answering every POST with the same token set, in a process of its own. */
const ENDPOINT = `
const body = JSON.stringify({ access_token: 'a'.repeat(43), expires_in: 7200, refresh_token: 'r'.repeat(43), open_id: 'o'.repeat(32), scope: 'user_info' });
require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)); })
  .listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });
process.stdin.on('end', () => process.exit(0)).resume();`;

async function main(): Promise<void> {
  const endpoint = spawn(process.execPath, ['-e', ENDPOINT], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [portLine] = (await once(endpoint.stdout, 'data')) as [Buffer];
  const authUrl = `http://127.0.0.1:${portLine.toString().trim()}`;
  const clientOf = (fetch?: typeof globalThis.fetch) =>
    new PlatformTokenClient({
      authUrl,
      clientId: 'demo-game',
      clientSecret: 'demo-secret',
      redirectUri: 'http://127.0.0.1/platform/callback',
      ...(fetch === undefined ? {} : { fetch }),
    });
  /** CPU µs per exchange of `client` over PER_ROUND exchanges, IN_FLIGHT at a time. */
  const cpuPerExchange = async (client: PlatformTokenClient): Promise<number> => {
    const before = process.cpuUsage();
    await inFlight(IN_FLIGHT, async (i) => {
      if (i >= PER_ROUND) return false;
      await client.exchangeCode('some-code');
    });
    const used = process.cpuUsage(before);
    return (used.user + used.system) / PER_ROUND;
  };
  const [http, withFetch] = [clientOf(), clientOf(fetch)];
  const samples = await alternatingRuns(
    { 'node:http': () => cpuPerExchange(http), fetch: () => cpuPerExchange(withFetch) },
    ROUNDS,
  );
  for (const [name, values] of samples)
    console.log(
      `${name}: ${median(values).toFixed(1)} µs of CPU per exchange (median of ${ROUNDS} rounds of ${PER_ROUND})`,
    );
  endpoint.stdin.end();
}

void main();
