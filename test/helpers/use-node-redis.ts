// Setup file of the `node-redis` Jest project: the Redis store suites run their stores on a
// node-redis 6 client at its default protocol (RESP3). See storeClientKind() in redis-clients.ts.
process.env.EPL_TEST_REDIS_CLIENT = 'node-redis 6 (RESP3)';
