// `npm run example`: the example game backend on its environment (see README), embedded defaults
// for everything that is not set.
import { readConfig } from './config';
import { startExample } from './start';

async function main(): Promise<void> {
  const config = readConfig();
  if (config.sessionSecretGenerated) {
    console.warn(
      '[example-app] SESSION_SECRET is not set: using a random one, so sessions end when the process restarts.',
    );
  }
  const running = await startExample(config);
  if (running.simulator) console.log(`Platform simulator (lobby): ${running.simulator.url}/`);
  console.log(`Example game backend: ${running.url}`);
  console.log(`Open ${running.url} and choose "Enter from the platform".`);

  const shutdown = (signal: string): void => {
    const closed = running.close();
    console.log(`${signal}: no new connections; finishing the requests in flight, then closing.`);
    closed.then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(
    `[example-app] could not start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
