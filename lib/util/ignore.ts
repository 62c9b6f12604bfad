// The handler of a failure nobody waits for: a promise handled on purpose (its outcome is looked at
// elsewhere, or the next request tries again), so that it is not an unhandled rejection.
export const ignore = (): undefined => undefined;
