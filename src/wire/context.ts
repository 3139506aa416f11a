/**
 * What a session negotiated that changes how bytes are read or written. One
 * context per direction: the decoder uses what we agreed to receive, the
 * encoder what we agreed to send.
 */
export interface CodecContext {
  /** RFC 6793 4-octet AS numbers in AS_PATH and AGGREGATOR. */
  readonly asn4: boolean;
  /** RFC 8654: messages up to 65535 bytes. */
  readonly extendedMessage: boolean;
  /** RFC 7911 path identifiers on NLRI, per family. */
  readonly addPathV4: boolean;
  readonly addPathV6: boolean;
}

export const DEFAULT_CONTEXT: CodecContext = Object.freeze({ asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false });

/** Before capabilities are known (the OPEN itself): RFC 4271 defaults. */
export const LEGACY_CONTEXT: CodecContext = Object.freeze({ asn4: false, extendedMessage: false, addPathV4: false, addPathV6: false });

export function maxMessageSize(ctx: CodecContext): number {
  return ctx.extendedMessage ? 65535 : 4096;
}
