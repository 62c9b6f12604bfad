// Setup file of the `node-redis5` Jest project: the Redis store suites run their stores on a
// node-redis 5 client at its default protocol (RESP2). See storeClientKind() in redis-clients.ts.
process.env.EPL_TEST_REDIS_CLIENT = 'node-redis 5 (RESP2)';
