// The store of docs/stores.md's "smallest correct store", as the page prints it (compiled from the
// page at run time), over an in-memory SQLite table standing in for the page's Postgres `db`: its
// `$n` parameters, `now()` and timestamps translated, nothing of the store's own code changed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { TokenStore } from 'express-platform-login';

type Row = Record<string, unknown>;

/** What the tests use of node:sqlite (Node 22.13+), which @types/node 20 does not declare. */
export interface Table {
  prepare(sql: string): {
    get(...args: unknown[]): Row | undefined;
    all(): Row[];
    run(...args: unknown[]): { changes: number | bigint };
  };
  exec(sql: string): void;
  function(name: string, implementation: () => number): void;
}
const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as unknown as {
  DatabaseSync: new (path: string) => Table;
};

/** What the page uses of pg-promise's `db`: `oneOrNone` (a row or `null`) and `result` (`rowCount`). */
interface Database {
  oneOrNone(sql: string, args: unknown[]): Promise<Row | null>;
  result(sql: string, args: unknown[]): Promise<{ rowCount: number }>;
}

/** The ```ts block under "## The smallest correct store", compiled to a function of `db`. */
function storeFromDocs(): (db: Database) => TokenStore {
  const page = readFileSync(join(__dirname, '..', '..', 'docs', 'stores.md'), 'utf8');
  const section = page.slice(page.indexOf('## The smallest correct store'));
  const source = /```ts\n([\s\S]*?)\n```/.exec(section)![1]!;
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const exports: Record<string, unknown> = {};
  // Compiled in the test's own realm, so the TypeErrors it throws are the ones the suite checks for.
  (new Function('exports', js) as (into: object) => void)(exports);
  return exports.sqlTokenStore as (db: Database) => TokenStore;
}

/** A table `kv(key primary key, value, version, expires_at)`, as the page's store needs. */
export function newTable(): Table {
  const sqlite = new DatabaseSync(':memory:');
  sqlite.function('now', () => Date.now());
  sqlite.exec(
    'create table kv (key text primary key, value text, version integer, expires_at integer)',
  );
  return sqlite;
}

/** Every value `table` holds, as the store wrote it. */
export const storedValues = (table: Table): string[] =>
  table
    .prepare('select value from kv')
    .all()
    .map((row) => String(row.value));

/** The docs' store over `table` (each call: another process's store over the same table). */
export function docsSqlStore(table: Table): TokenStore {
  const statement = (text: string) => table.prepare(text.replace(/\$(\d+)/g, '?$1'));
  const args = (values: unknown[]) =>
    values.map((value) => (value instanceof Date ? value.getTime() : value));
  const db: Database = {
    async oneOrNone(text, values) {
      const row = statement(text).get(...args(values)) ?? null;
      if (row && typeof row.expires_at === 'number') row.expires_at = new Date(row.expires_at);
      return row;
    },
    async result(text, values) {
      return { rowCount: Number(statement(text).run(...args(values)).changes) };
    },
  };
  return storeFromDocs()(db);
}
