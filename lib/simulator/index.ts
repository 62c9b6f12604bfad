// express-platform-login/simulator: a simulated game platform (token endpoint, open API, lobby)
// for development and tests. Loads without ioredis or connect-redis.
export { DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_PLAYERS } from './options';
export type { SimulatorClient, SimulatorPlayer, SimulatorOptions } from './options';
export type { FaultOptions, SimulatorFault } from './faults';
export { PlatformSimulator, startSimulator } from './simulator';
export type { SimulatorCallCounts } from './platform-state';
