/** A piece of user or peer text that is not a valid address or prefix. */
export class ParseError extends Error {
  override readonly name = 'ParseError';
  constructor(
    readonly input: string,
    readonly reason: string,
  ) {
    super(`invalid ${reason}: ${JSON.stringify(input)}`);
  }
}
