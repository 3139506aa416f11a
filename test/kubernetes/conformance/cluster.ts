/**
 * The cluster most scenarios share. Addresses are chosen so that string
 * order and numeric order disagree (Calico compares peer addresses as
 * strings): from n1's 192.0.2.10, "192.0.2.2" and "192.0.2.11" are greater,
 * "192.0.2.1" is smaller.
 */
import { affinity, ipPool, node, type Obj } from './harness.js';

export const N1 = '192.0.2.10';
export const NODES: readonly Obj[] = [
  node('n1', { ipv4: `${N1}/24` }),
  node('n2', { ipv4: '192.0.2.2/24' }),
  node('n3', { ipv4: '192.0.2.11/24' }),
  node('n4', { ipv4: '192.0.2.1/24' }),
];

/** n1 has two confirmed blocks (one confirmed by having no state, as IPAM writes it) and a pending one; n2 has one. */
export const BLOCKS: readonly Obj[] = [
  affinity('n1', '198.18.1.0/26'),
  affinity('n1', '198.18.1.64/26', 'confirmed'),
  affinity('n1', '198.18.1.128/26', 'pending'),
  affinity('n2', '198.18.2.0/26'),
];
export const N1_BLOCKS = ['198.18.1.0/26', '198.18.1.64/26'];
export const POOL = ipPool('pool', { cidr: '198.18.0.0/16' });

/** A route from n2 (same subnet) and from a peer beyond it, for kernel decisions. */
export const NEAR = '192.0.2.2';
export const FAR = '203.0.113.9';
