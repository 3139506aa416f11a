/**
 * The one error the codec raises. It carries the NOTIFICATION that RFC 4271
 * §6 (as revised by RFC 7606) prescribes; the session sends it and closes.
 * Recoverable UPDATE problems are not errors: they come back as
 * `UpdateMessage.issues`.
 */
export class BgpError extends Error {
  override readonly name = 'BgpError';
  constructor(
    readonly code: number,
    readonly subcode: number,
    message: string,
    readonly data: Uint8Array = new Uint8Array(0),
  ) {
    super(message);
  }
}
