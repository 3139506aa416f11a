import { describe, expect, it } from 'vitest';
import { sessionLink } from '../../src/speaker/session-link.js';

const table = {
  lo: [
    { address: '127.0.0.1', cidr: '127.0.0.1/8' },
    { address: '::1', cidr: '::1/128' },
  ],
  eth0: [
    { address: '192.0.2.10', cidr: '192.0.2.10/24' },
    { address: '2001:db8::10', cidr: '2001:db8::10/64' },
    { address: 'fe80::1', cidr: 'fe80::1/64' },
  ],
  eth1: [{ address: '198.51.100.10', cidr: '198.51.100.10/25' }],
  vxlan: [{ address: '198.51.100.1', cidr: '198.51.100.1/24' }],
  down: undefined,
};

describe('sessionLink: the interface a session runs over', () => {
  it('the interface holding the local address, with its connected network', () => {
    expect(sessionLink('192.0.2.10', table)).toEqual({ iface: 'eth0', network: expect.objectContaining({}) });
    expect(sessionLink('192.0.2.10', table)!.network.toString()).toBe('192.0.2.0/24');
    expect(sessionLink('::ffff:192.0.2.10', table)!.iface).toBe('eth0');
    expect(sessionLink('2001:db8::10', table)!.network.toString()).toBe('2001:db8::/64');
    expect(sessionLink('fe80::1%eth0', table)!.iface).toBe('eth0');
  });

  it('else the interface whose network holds it, the longest; none when no network does or the text is no address', () => {
    expect(sessionLink('127.0.0.65', table)).toMatchObject({ iface: 'lo' });
    expect(sessionLink('198.51.100.20', table)!.iface).toBe('eth1'); // /25 beats vxlan's /24
    expect(sessionLink('198.51.100.200', table)!.iface).toBe('vxlan');
    expect(sessionLink('203.0.113.1', table)).toBeUndefined();
    expect(sessionLink('fe80::1%eth9', table)).toBeUndefined();
    expect(sessionLink('not-an-address', table)).toBeUndefined();
  });
});
