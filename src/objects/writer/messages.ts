/** What the main thread and the writer thread (thread.ts) hand each other: its start data and messages. */
import type { ComponentArgs } from '../../config/manifest.ts';
import type { StoreConfig } from '../config.ts';

/** workerData of the writer thread. */
export interface WriterInit {
  /** This file (loaded by boot.mjs). */
  entry: string;
  config: StoreConfig;
  components: Record<string, ComponentArgs>;
  logFile: string;
  logFormat: 'text' | 'json';
}

/** Main → writer: stop, or an event thread ended (its channels are let go). */
export type WriterCommand = { stop: true } | { threadEnded: number };
/** Objects a durable group changed: type name, id, new version (only with `announceCommits`). */
export type CommittedObjects = Array<[type: string, id: string, version: number]>;
/** Writer → main. */
export type WriterEvent = { ready: true } | { failed: string } | { stopped: true } | { committed: CommittedObjects };
