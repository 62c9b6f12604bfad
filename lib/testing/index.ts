// express-platform-login/testing: the TokenStore contract suite, to check a studio's own store
// against the same tests as the package's MemoryTokenStore and RedisTokenStore.
export {
  tokenStoreContract,
  newSessionId,
  newSessionKey,
  sampleRecord,
  type ContractTestFunctions,
  type TokenStoreContractOptions,
} from './store-contract';
