import { describe, expect, it } from 'vitest';
import { checkLab, findBinary, isCi, requireLab, type LabProbe } from './require.js';

const probe = (over: Partial<LabProbe>): LabProbe => ({ platform: 'linux', uid: 0, findBinary: (b) => `/bin/${b}`, env: {}, ...over });

describe('requireLab', () => {
  it('is available with root, Linux and every binary', () => {
    expect(checkLab(['bird', 'frr'], { probe: probe({ platform: process.platform }) })).toEqual({ ok: true, reasons: [] });
  });

  it('names what is missing', () => {
    const a = checkLab(['frr', 'gobgp'], { probe: probe({ uid: 1000, findBinary: (b) => (b === 'gobgpd' || b === 'vtysh' ? undefined : `/x/${b}`) }) });
    expect(a.ok).toBe(false);
    expect(a.reasons[0]).toMatch(/not running as root/);
    expect(a.reasons[1]).toBe('missing binaries: vtysh, gobgpd (Debian: apt-get install bird2 frr gobgpd exabgp iproute2)');
  });

  it('only asks for the binaries of the kinds in use, plus the extra ones, once each', () => {
    const seen: string[] = [];
    checkLab(['host', 'bridge', 'exabgp'], { binaries: ['curl', 'ip'], probe: probe({ findBinary: (b) => (seen.push(b), `/x/${b}`) }) });
    expect(seen.sort()).toEqual(['curl', 'exabgp', 'ip']);
  });

  it('fails in CI and skips (returns not ok) elsewhere', () => {
    const missing = probe({ findBinary: () => undefined });
    expect(() => requireLab(['bird'], { probe: { ...missing, env: { CI: 'true' } } })).toThrow(/CI=true, so this is a failure/);
    expect(requireLab(['bird'], { probe: { ...missing, env: {} } }).ok).toBe(false);
    expect(requireLab(['bird'], { probe: { ...missing, env: { CI: 'false' } } }).ok).toBe(false);
  });

  it('reads CI like CI systems set it', () => {
    expect([isCi({ CI: 'true' }), isCi({ CI: '1' }), isCi({ CI: 'TRUE' }), isCi({}), isCi({ CI: 'false' }), isCi({ CI: '0' }), isCi({ CI: '' })]).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
  });

  it('finds real binaries on PATH and in sbin', () => {
    expect(findBinary('sh')).toMatch(/\/sh$/);
    expect(findBinary('no-such-binary-tsbgp')).toBeUndefined();
  });
});
