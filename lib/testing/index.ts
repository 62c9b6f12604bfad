// express-platform-login/testing: what a studio's own token store needs: the contract's types and
// the suite that checks a store against it (the same one the package's stores pass), with values
// for a store's own tests.
export {
  tokenStoreContract,
  type ContractTestFunctions,
  type TokenStoreContractOptions,
} from './store-contract';
export { newSessionKey, sampleRecord } from './samples';
export type { TokenStore, StoredValue, StorePutOptions } from '../core/token-store';
