// Setup file of the `ioredis6` Jest project: the Redis store suites run their stores on an
// ioredis 6 client at its default protocol (RESP3). See storeClientKind() in redis-clients.ts.
process.env.EPL_TEST_REDIS_CLIENT = 'ioredis 6 (RESP3)';
