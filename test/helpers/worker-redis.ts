// Setup file of the projects that use Redis: this test file's REDIS_URL is its Jest worker's own
// redis-server (see global-setup.ts), unless REDIS_URL was given.
const urls = process.env.EPL_TEST_REDIS_URLS?.split(' ') ?? [];
if (!process.env.REDIS_URL && urls.length > 0) {
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  process.env.REDIS_URL = urls[(worker - 1) % urls.length];
}
