// What a wall-clock bound in an integration test adds for the machine it runs on.

/**
 * Added to a bound on the wall clock: these tests run beside others on a loaded machine, where a
 * stall delays any step. What the bound tells apart (an answer, a close, against a hang or a wait
 * of tens of seconds) stays told apart; how fast the package is, the bench measures.
 */
export const LOAD_ALLOWANCE_MS = 4000;
