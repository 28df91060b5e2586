/**
 * How an event worker's outbound ring (`outbound-writer.ts`) reaches the main thread: the
 * session-out channel that hands the ring over once, and two shared cells every thread reads:
 * the process-wide flush sequence (the main thread applies flushes in its order) and whether a
 * session listener reads the rings (without one, operations are dropped).
 *
 * The cell functions run on any thread (the main thread's outbound reader and session feature
 * import them from `outbound-writer.ts`); the channel is opened on an event thread.
 */
import { MessageChannel, parentPort, threadId, type MessagePort } from 'node:worker_threads';
import { featureCell } from '../../events/wake.ts';
import type { ChannelHello } from '../../events/types.ts';
import type { RingHello } from '../outbound-ring.ts';

/** The process-wide flush sequence (shared cell): the main thread applies flushes in its order. */
const seqCell = featureCell(0);
/** 1 while a session listener reads the rings (shared cell); without one, operations are dropped. */
const listeningCell = featureCell(1);

/** Main thread: whether session operations of workers are read (the listener runs). */
export function setOutboundListening(on: boolean): void {
  Atomics.store(listeningCell.cells, listeningCell.index, on ? 1 : 0);
}

/** Whether a session listener reads the rings (read per operation). */
export function outboundListening(): boolean {
  return Atomics.load(listeningCell.cells, listeningCell.index) === 1;
}

/**
 * Flush numbers run modulo 2^30: the shared cell is an Int32 that counts on past 2^31 (a busy
 * server gets there within days), and a number plus one still fits it positive (`postingSeq`).
 */
export const FLUSH_SEQ_MASK = 0x3fffffff;
const SEQ_HALF = 0x20000000;

/** Takes the next flush sequence number (any thread). */
export function nextFlushSeq(): number {
  return Atomics.add(seqCell.cells, seqCell.index, 1) & FLUSH_SEQ_MASK;
}

/** The sequence number the next flush will get (main thread, at start). */
export function currentFlushSeq(): number {
  return Atomics.load(seqCell.cells, seqCell.index) & FLUSH_SEQ_MASK;
}

/** How far flush `seq` comes after flush `from`, modulo 2^30: 0 the same, negative before it. */
export function flushSeqAfter(seq: number, from: number): number {
  const d = (seq - from) & FLUSH_SEQ_MASK;
  return d >= SEQ_HALF ? d - FLUSH_SEQ_MASK - 1 : d;
}

/**
 * Opens the session-out channel to the main thread and hands it the ring `buffer`: this side's
 * port (unref'd), or null outside a worker thread.
 */
export function openSessionOut(buffer: SharedArrayBuffer): MessagePort | null {
  if (parentPort === null) return null;
  const { port1, port2 } = new MessageChannel();
  const hello: ChannelHello = { type: 'channel', channel: 'session-out', threadId, port: port2 };
  parentPort.postMessage(hello, [port2]);
  const ring: RingHello = { kind: 'ring', threadId, buffer };
  port1.postMessage(ring);
  port1.unref();
  return port1;
}
