// Stops the redis-server started by global-setup.ts.
export default async function globalTeardown(): Promise<void> {
  await globalThis.__EPL_REDIS__?.stop();
}
