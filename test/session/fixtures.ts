import { createFsm, transition, type Fsm } from '../../src/session/fsm.js';
import { sessionConfig, type FsmAction, type FsmEvent, type SessionConfig } from '../../src/session/types.js';
import { BgpError } from '../../src/wire/errors.js';
import type { Capability, OpenMessage } from '../../src/wire/types.js';

export const cfg = (over: Partial<SessionConfig> = {}): SessionConfig => sessionConfig({ localAs: 65001, localId: '10.0.0.1', peerAs: 65002, ...over });

export function peerOpen(over: Partial<OpenMessage> & { caps?: Capability[] } = {}): OpenMessage {
  const caps = over.caps ?? [{ kind: 'multiprotocol', afi: 1, safi: 1 }, { kind: 'fourOctetAs', asn: 65002 }, { kind: 'routeRefresh' }];
  return { type: 'open', version: 4, myAs: 65002, holdTime: 90, bgpId: '10.0.0.2', params: [{ type: 2, capabilities: caps }], ...over };
}

export const ev = {
  open: (o: OpenMessage = peerOpen()): FsmEvent => ({ type: 'BGPOpen', message: o }),
  notif: (code: number, subcode: number, data = new Uint8Array(0)): FsmEvent => ({ type: 'NotifMsg', message: { type: 'notification', code, subcode, data } }),
  verErr: (): FsmEvent => ({ type: 'NotifMsgVerErr', message: { type: 'notification', code: 2, subcode: 1, data: new Uint8Array(0) } }),
  headerErr: (): FsmEvent => ({ type: 'BGPHeaderErr', error: new BgpError(1, 2, 'bad length', Uint8Array.of(0, 5)) }),
  openErr: (): FsmEvent => ({ type: 'BGPOpenMsgErr', error: new BgpError(2, 4, 'bad param') }),
  updateErr: (): FsmEvent => ({ type: 'UpdateMsgErr', error: new BgpError(3, 1, 'malformed') }),
  update: (): FsmEvent => ({ type: 'UpdateMsg', message: { type: 'update', withdrawn: [], attributes: { origin: 0 }, nlri: [] } }),
  refresh: (): FsmEvent => ({ type: 'RouteRefresh', message: { type: 'routeRefresh', afi: 1, safi: 1, subtype: 0 } }),
};

/** Runs events from Idle, returning the FSM reached; throws if a step lands somewhere unexpected. */
export function drive(c: SessionConfig, events: FsmEvent[], now = 0): Fsm {
  let f = createFsm(c);
  for (const e of events) f = transition(f, e, now).fsm;
  return f;
}

export const PATHS: Record<string, FsmEvent[]> = {
  Idle: [],
  Connect: [{ type: 'ManualStart' }],
  Active: [{ type: 'ManualStart_with_PassiveTcpEstablishment' }],
  OpenSent: [{ type: 'ManualStart' }, { type: 'TcpConnection_Acknowledged' }],
  OpenConfirm: [{ type: 'ManualStart' }, { type: 'TcpConnection_Acknowledged' }, ev.open()],
  Established: [{ type: 'ManualStart' }, { type: 'TcpConnection_Acknowledged' }, ev.open(), { type: 'KeepAliveMsg' }],
};

export const sends = (actions: readonly FsmAction[]) => actions.flatMap((a) => (a.type === 'send' ? [a.message] : []));
