/** FSM actions as short readable lines, so a table row shows the whole output of a transition. */
import type { FsmAction } from '../../src/session/types.js';

export function renderAction(a: FsmAction): string {
  switch (a.type) {
    case 'send': {
      const m = a.message;
      return m.type === 'notification' ? `send NOTIFICATION ${m.code}/${m.subcode}` : `send ${m.type.toUpperCase()}`;
    }
    case 'startTimer':
      return `start ${a.timer} ${a.seconds}s`;
    case 'stopTimer':
      return `stop ${a.timer}`;
    case 'stateChange':
      return `state ${a.from}→${a.to}`;
    case 'sessionDown':
    case 'attemptFailed':
      return `${a.type} ${a.reason.kind}`;
    default:
      return a.type;
  }
}

export const renderActions = (actions: readonly FsmAction[]): string[] => actions.map(renderAction);
