// The contract suite's store calls, each named with its arguments, and the checks on what they
// answered: a failure says which call answered what and what was expected. A value is shown by its
// length only (it holds tokens); keys, versions and lifetimes as they are.
import type { StorePutOptions, StoredValue, TokenStore } from '../core/token-store';

/** One call made, and how it ended: resolved with `result`, or rejected with `error`. */
export type Called<T> = { call: string } & (
  { rejected: false; result: T } | { rejected: true; error: unknown }
);

/** A stored value (or anything else) as a message shows it: never the value itself. */
export function shown(result: unknown): string {
  if (result === undefined) return 'undefined';
  if (typeof result === 'object' && result !== null && 'value' in result) {
    const { value, ...rest } = result as StoredValue;
    const length = typeof value === 'string' ? `${value.length} characters` : typeof value;
    const fields = Object.entries(rest).map(([name, field]) => `${name}: ${JSON.stringify(field)}`);
    return `{ ${[`value: <${length}>`, ...fields].join(', ')} }`;
  }
  return JSON.stringify(result);
}

const key = (k: string) => JSON.stringify(k);
const value = (v: string) => `<value: ${v.length} characters>`;
const options = (o: StorePutOptions) =>
  `{ expectedVersion: ${o.expectedVersion}, ttlMs: ${o.ttlMs} }`;

/** The store behind `getStore`, each call answered as a {@link Called}: it never throws. */
export class ContractCalls {
  constructor(private readonly getStore: () => TokenStore) {}

  get(k: string): Promise<Called<StoredValue | undefined>> {
    return called(`store.get(${key(k)})`, () => this.getStore().get(k));
  }

  put(k: string, v: string, o: StorePutOptions): Promise<Called<number | undefined>> {
    return called(`store.put(${key(k)}, ${value(v)}, ${options(o)})`, () =>
      this.getStore().put(k, v, o),
    );
  }

  delete(k: string, version?: number): Promise<Called<boolean>> {
    const args = version === undefined ? key(k) : `${key(k)}, ${version}`;
    return called(`store.delete(${args})`, () => this.getStore().delete(k, version));
  }

  renew(k: string, ttlMs: number): Promise<Called<boolean>> {
    return called(`store.renew(${key(k)}, ${ttlMs})`, () => this.getStore().renew(k, ttlMs));
  }
}

async function called<T>(call: string, run: () => Promise<T>): Promise<Called<T>> {
  try {
    return { call, rejected: false, result: await run() };
  } catch (error) {
    return { call, rejected: true, error };
  }
}

const what = (outcome: Called<unknown>): string =>
  outcome.rejected
    ? `rejected with ${outcome.error instanceof Error ? `${outcome.error.name}: ${outcome.error.message.slice(0, 200)}` : typeof outcome.error}`
    : `resolved ${shown(outcome.result)}`;

/** A failure of the contract suite: its message names the call, what it did and what was expected. */
export class TokenStoreContractError extends Error {
  override readonly name = 'TokenStoreContractError';
}

/**
 * Fails the test: `<call> <what it did>; expected <expected> (<why>)`. The stack starts at the
 * suite's line that checked (in dist/testing), not inside this file.
 */
export function fail(
  outcome: Called<unknown> | string,
  expected: string,
  why: string,
  from: (...args: never[]) => unknown = fail,
): never {
  const did = typeof outcome === 'string' ? outcome : `${outcome.call} ${what(outcome)}`;
  const error = new TokenStoreContractError(`${did}; expected ${expected} (${why}).`);
  Error.captureStackTrace(error, from);
  throw error;
}

/** What the call resolved; fails naming the call when it rejected. */
export function resultOf<T>(outcome: Called<T>, why: string): T {
  if (outcome.rejected) fail(outcome, 'it to resolve', why, resultOf);
  return outcome.result;
}

/** Checks the call resolved `expected` (compared as JSON: numbers, booleans, undefined). */
export function expectResult<T>(outcome: Called<T>, expected: T, why: string): void {
  if (outcome.rejected || shown(outcome.result) !== shown(expected)) {
    fail(outcome, shown(expected), why, expectResult);
  }
}

/** Checks a get resolved a stored value with this value and version. */
export function expectStored(
  outcome: Called<StoredValue | undefined>,
  expected: { value: string; version: number },
  why: string,
): StoredValue {
  const stored = outcome.rejected ? undefined : outcome.result;
  if (stored?.value !== expected.value || stored.version !== expected.version) {
    fail(outcome, shown(expected), why, expectStored); // the value by its length only, as shown
  }
  return stored;
}

/** Checks the call rejected with an instance of `errorClass`. */
export function expectRejection(
  outcome: Called<unknown>,
  errorClass: new (...args: never[]) => Error,
  why: string,
): void {
  if (!outcome.rejected || !(outcome.error instanceof errorClass)) {
    fail(outcome, `a rejection with ${errorClass.name}`, why, expectRejection);
  }
}
