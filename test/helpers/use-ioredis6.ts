// Setup file of the `ioredis6` Jest project: processes a test spawns (game backends, the example)
// inherit this variable, and source-aliases.ts then resolves `ioredis` to ioredis 6 in them too.
process.env.EPL_TEST_IOREDIS = '6';
