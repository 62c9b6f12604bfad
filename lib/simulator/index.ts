// express-platform-login/simulator: a simulated game platform (token endpoint, open API, lobby)
// for development and tests. Loads without ioredis or connect-redis.
export { DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_PLAYERS } from './demo-data';
export type { SimulatorClient, SimulatorPlayer } from './demo-data';
export type { FaultOptions, SimulatorFault } from './faults';
export type { SimulatorOptions } from './options';
export { PlatformSimulator, startSimulator } from './simulator';
export type { SimulatorCallCounts } from './platform-state';
