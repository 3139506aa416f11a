/**
 * The one speaker interface the agent depends on: what `SpeakerApi` offers,
 * the speaker's events, and BGPFilter policies. `BgpSpeaker` (src/speaker/speaker.ts)
 * implements it, and so does the agent tests' fake
 * (test/agent/fake-speaker.ts), in full: the agent never asks a speaker what
 * it can do.
 */
import type { EventEmitter } from 'eventemitter3';
import type { SpeakerApi, SpeakerBfdApi, SpeakerDrainApi, SpeakerEvents, SpeakerOptions, SpeakerPolicyApi, SpeakerReflectorApi } from '../speaker/index.js';

export interface AgentSpeaker
  extends
    SpeakerApi,
    SpeakerBfdApi,
    SpeakerDrainApi,
    Pick<SpeakerPolicyApi, 'definePolicies'>,
    SpeakerReflectorApi,
    Pick<EventEmitter<SpeakerEvents>, 'on' | 'off'> {}

export type SpeakerFactory = (opts: SpeakerOptions) => AgentSpeaker;
