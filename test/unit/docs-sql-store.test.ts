// The store docs/stores.md prints as "the smallest correct store" passes the contract suite the same
// page tells a studio to run on its own (express-platform-login/testing), as printed.
import { tokenStoreContract } from 'express-platform-login/testing';
import { docsSqlStore, newTable } from '../helpers/docs-sql-store';

describe("docs/stores.md's SQL store", () => {
  const store = docsSqlStore(newTable());
  tokenStoreContract(() => store);
});
