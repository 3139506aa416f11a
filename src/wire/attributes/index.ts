/**
 * Path attributes: one descriptor per type code (descriptors.ts), the
 * block-level RFC 7606 checks and canonical encoder (block.ts), AS_PATH and
 * the RFC 6793 merge (aspath.ts), MP_REACH/MP_UNREACH (mp.ts). The RIB can
 * use encodeAttributes/attributesSize to cache an interned set's bytes per
 * encoding context.
 */
export { attributesSize, decodeAttributeBlock, encodeAttributes, type DecodedBlock } from './block.js';
export { attributeName, DESCRIPTORS, ENCODE_ORDER, type AttributeDescriptor } from './descriptors.js';
export { mergeAs4Path, pathCount } from './aspath.js';
