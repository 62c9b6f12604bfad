// The error every options parser of the package (and of its simulator) throws: a TypeError, as for
// any wrong argument, with a stable `code` so a caller can tell a wrong option from other failures.

/** An option is unknown, missing or has a wrong value; the message names it and what is allowed. */
export class InvalidOptionError extends TypeError {
  /** Always `ERR_PLATFORM_INVALID_OPTION`. */
  readonly code = 'ERR_PLATFORM_INVALID_OPTION';
  /**
   * Path of the first wrong option, e.g. `tokenClient.timeoutMs`; `undefined` when the options
   * value as a whole is wrong (not an object). Never the option's value: it may be a secret.
   */
  readonly option: string | undefined;

  constructor(message: string, option?: string) {
    super(message);
    this.name = 'InvalidOptionError';
    this.option = option;
  }
}
