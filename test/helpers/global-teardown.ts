// Stops the redis-servers started by global-setup.ts (once, whichever project's teardown runs first:
// teardowns run after every test file of the run).
export default async function globalTeardown(): Promise<void> {
  const servers = globalThis.__EPL_REDIS__ ?? [];
  globalThis.__EPL_REDIS__ = undefined;
  await Promise.all(servers.map((server) => server.stop()));
}
