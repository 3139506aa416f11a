import { describe, expect, it } from 'vitest';
import { transition } from '../../src/session/fsm.js';
import type { NotificationMessage } from '../../src/wire/types.js';
import { cfg, drive, PATHS, sends } from './fixtures.js';

const deconfigured: NotificationMessage = { type: 'notification', code: 6, subcode: 3, data: Uint8Array.of(3, 0x62, 0x79, 0x65) };

describe('ManualStop with a chosen NOTIFICATION', () => {
  for (const state of ['OpenSent', 'OpenConfirm', 'Established'] as const) {
    it(`${state}: sends the given NOTIFICATION instead of Cease 6/2, and goes Idle without restarting`, () => {
      const f = drive(cfg(), PATHS[state]);
      expect(f.state).toBe(state);
      const t = transition(f, { type: 'ManualStop', notification: deconfigured }, 0);
      expect(sends(t.actions)).toEqual([deconfigured]);
      expect(t.fsm.state).toBe('Idle');
      expect(t.fsm.autoRestart).toBe(false);
      const plain = transition(f, { type: 'ManualStop' }, 0);
      expect(sends(plain.actions)).toMatchObject([{ type: 'notification', code: 6, subcode: 2 }]);
    });
  }
});
