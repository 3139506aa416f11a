/**
 * The one error the codec raises. It carries the NOTIFICATION that RFC 4271
 * §6 (as revised by RFC 7606) prescribes; the session sends it and closes.
 * Recoverable UPDATE problems are not errors: they come back as
 * `UpdateMessage.issues`.
 */
import { CeaseSubcode, ErrorCode, HeaderSubcode, OpenSubcode, RouteRefreshSubcode, UpdateSubcode } from './constants.js';

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

  // Named constructors: the code by method, the subcode by name (constants.ts), never bare numbers.

  /** RFC 4271 §6.1 Message Header Error. */
  static header(subcode: keyof typeof HeaderSubcode, message: string, data?: Uint8Array): BgpError {
    return new BgpError(ErrorCode.MESSAGE_HEADER, HeaderSubcode[subcode], message, data);
  }

  /** RFC 4271 §6.2 OPEN Message Error. */
  static open(subcode: keyof typeof OpenSubcode, message: string, data?: Uint8Array): BgpError {
    return new BgpError(ErrorCode.OPEN_MESSAGE, OpenSubcode[subcode], message, data);
  }

  /** RFC 4271 §6.3 UPDATE Message Error (only where RFC 7606 still resets the session). */
  static update(subcode: keyof typeof UpdateSubcode, message: string, data?: Uint8Array): BgpError {
    return new BgpError(ErrorCode.UPDATE_MESSAGE, UpdateSubcode[subcode], message, data);
  }

  /** RFC 7313 §5 ROUTE-REFRESH Message Error. */
  static routeRefresh(subcode: keyof typeof RouteRefreshSubcode, message: string, data?: Uint8Array): BgpError {
    return new BgpError(ErrorCode.ROUTE_REFRESH, RouteRefreshSubcode[subcode], message, data);
  }

  /** RFC 4486 Cease, for local failures that end the session (e.g. out of resources). */
  static cease(subcode: keyof typeof CeaseSubcode, message: string, data?: Uint8Array): BgpError {
    return new BgpError(ErrorCode.CEASE, CeaseSubcode[subcode], message, data);
  }
}
