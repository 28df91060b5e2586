/**
 * Sessions on I/O threads (`SessionService.io_threads_size` > 1), as the main thread sees them.
 *
 * Each I/O thread (`../io/thread.ts`) runs a uWebSockets.js app on the shared port and owns the
 * sessions it accepts: it reads their messages and queues them as events itself, and writes
 * their frames. The main thread keeps what spans sessions: the session table, groups, accounts
 * (through `onSessionClosed`), the cluster (`remote`) and the closed events. It routes every
 * frame, close and publish to the owning thread by the session id's thread bits, packing one
 * turn's operations per thread into one posted buffer (`../io/io-batch.ts`).
 *
 * A thread tells the main thread of a session before it queues any of its events, on a port the
 * main thread can read synchronously: an operation for a session not known yet reads that
 * thread's notes first, so a handler that runs before the note arrived finds its session.
 */
import os from 'node:os';
import uWS from 'uWebSockets.js';
import { native } from '../../native.ts';
import { listenUws } from '../../api/main/listen.ts';
import { logFileOf } from '../../log/log-file.ts';
import type { Manifest } from '../../config/manifest.ts';
import type { ThreadContext } from '../../hooks/thread-context.ts';
import { CLOSED_EVENT } from '../worker/message-event.ts';
import type { SessionClosedInfo } from '../types.ts';
import type { CodecName } from '../protocol.ts';
import { ioThreadOf } from '../io/io-ids.ts';
import { statsBuffer, statsRow, statsSum } from '../io/io-stats.ts';
import type { IoBatchWriter } from '../io/io-batch.ts';
import type { HandledTypes, IoCommand, IoNote } from '../io/io-messages.ts';
import { IoThreadPool } from './io-threads.ts';
import { SessionGroups } from '../groups.ts';
import { pushEngineEvent } from '../push-stage.ts';
import type { HandlerView, RemoteSessions, SessionServiceOptions, SessionStats } from '../listener-types.ts';
import type { LocalSessions } from './local-sessions.ts';

interface Entry {
  id: number;
  codec: CodecName;
  thread: number;
  groups: Set<string> | null;
}

const utf8 = new TextEncoder();
const bytesOf = (frame: string | Uint8Array): Uint8Array => (typeof frame === 'string' ? utf8.encode(frame) : frame);

/** The most I/O threads a manifest may ask for here: the cores (and never more than the id bits hold). */
export function maxIoThreads(): number {
  return Math.min(64, os.availableParallelism());
}

export class IoSessions implements LocalSessions {
  readonly stats: SessionStats;
  /** The main thread's own counts (frames it could route nowhere). */
  private readonly own: SessionStats;
  private readonly statsMemory: SharedArrayBuffer;
  private readonly sessions = new Map<number, Entry>();
  private readonly groups = new SessionGroups<Entry>((group, hasMembers) => this.remote?.groupChanged(group, hasMembers));
  private readonly threads: IoThreadPool;
  private boundPort = 0;
  /**
   * The threads were told to stop: a batch posted after that is never read, so a frame for a
   * session of theirs is counted as dropped from then on (as the one-thread listener counts a
   * frame for a session it has closed).
   */
  private stopping = false;
  private maintenance: ((codec: CodecName) => string | Uint8Array) | null = null;
  private logLevel: number;
  onSessionClosed: (sessionId: number) => string | null = () => null;
  remote: RemoteSessions | null = null;
  /** A plugin reload changes the message types served: the threads hear the new set. */
  typesChanged = (): void => this.post({ kind: 'types', handled: this.handled() });

  constructor(private readonly thread: ThreadContext, private readonly handlers: HandlerView & { messages: { keys(): Iterable<string> } },
    private readonly options: SessionServiceOptions, private readonly count: number) {
    this.statsMemory = statsBuffer(count + 1);
    this.stats = statsSum(this.statsMemory);
    this.own = statsRow(this.statsMemory, count);
    this.threads = new IoThreadPool(thread.log, (index, note) => this.delivered(index, note), (index) => {
      // Sessions it still held are gone with it.
      this.readNotes(index);
      this.applyDeferred();
      for (const e of [...this.sessions.values()]) if (e.thread === index) this.lost(e, 1006, 'I/O thread ended');
    });
    this.logLevel = thread.flags.get<number>('session_message_logging_level');
    thread.flags.onChange('session_message_logging_level', (_n, v) => { this.logLevel = v as number; });
  }

  get port(): number {
    return this.boundPort;
  }

  get size(): number {
    return this.sessions.size;
  }

  has(sessionId: number): boolean {
    return this.entry(sessionId) !== undefined;
  }

  sessionIds(): number[] {
    return [...this.sessions.keys()];
  }

  private handled(): HandledTypes {
    return { messages: [...this.handlers.messages.keys()], opened: this.handlers.opened.length, closed: this.handlers.closed.length };
  }

  /** Starts the threads, each listening on the same port (SO_REUSEPORT). */
  async listen(manifest: Pick<Manifest, 'dir' | 'components'> = { dir: '.', components: this.thread.manifest.components }): Promise<number> {
    // A bind of its own first, alone on the port: a port another process listens on (even one that
    // shares it the same way) stops the start with the reason. A port bound as 0 cannot be shared:
    // this takes a free one, lets it go, and every thread binds it.
    const probe = await listenUws(uWS.App(), this.options.address, this.options.port, 'SessionService');
    const port = probe.port;
    probe.close();
    const listening: Array<Promise<void>> = [];
    for (let i = 0; i < this.count; i++) listening.push(this.start(i, port, manifest));
    const results = await Promise.allSettled(listening);
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined) {
      await this.shutdown();
      throw (failed as PromiseRejectedResult).reason as Error;
    }
    this.boundPort = port;
    return port;
  }

  private start(index: number, port: number, manifest: Pick<Manifest, 'dir' | 'components'>): Promise<void> {
    return this.threads.start(index, {
      components: manifest.components,
      logFile: logFileOf(manifest),
      logFormat: (manifest.components.Logging?.log_format as 'text' | 'json' | undefined) ?? 'text',
      options: this.options,
      listenPort: port,
      stats: this.statsMemory,
      handled: this.handled(),
      maintenance: this.maintenance === null ? null : { json: this.maintenance('json'), msgpack: this.maintenance('msgpack') },
    });
  }

  /**
   * Takes an I/O thread's notes waiting on its port now (they are otherwise delivered as
   * messages). This runs inside other operations (an account call asking whether a session
   * exists), so only opens are applied at once; closes wait for the operation to end, in order.
   */
  private readNotes(index: number): void {
    for (const n of this.threads.takeNotes(index)) {
      if (n.kind === 'opened') this.note(index, n);
      else this.defer(index, n);
    }
  }

  /** Notes set aside by `readNotes`, applied in order once the current operation is done. */
  private readonly deferred: Array<{ index: number; note: IoNote }> = [];

  private defer(index: number, note: IoNote): void {
    this.deferred.push({ index, note });
    if (this.deferred.length === 1) queueMicrotask(() => this.applyDeferred());
  }

  private applyDeferred(): void {
    // A note applied here may defer more (its closed handler's account logout): they join the end.
    for (let i = 0; i < this.deferred.length; i++) this.note(this.deferred[i]!.index, this.deferred[i]!.note);
    this.deferred.length = 0;
  }

  /** A note delivered as a message: after any set aside before it (opens go at once, as in `readNotes`). */
  private delivered(index: number, m: IoNote): void {
    if (m.kind === 'opened' || this.deferred.length === 0) this.note(index, m);
    else this.defer(index, m);
  }

  private note(index: number, m: IoNote): void {
    switch (m.kind) {
      case 'opened': {
        const e: Entry = { id: m.id, codec: m.id % 2 === 1 ? 'msgpack' : 'json', thread: index, groups: null };
        this.sessions.set(m.id, e);
        this.remote?.opened(m.id);
        return;
      }
      case 'closed': {
        const e = this.sessions.get(m.id);
        if (e !== undefined) this.closed(e, m.code, m.reason);
        return;
      }
      case 'stopped':
        this.threads.stopped(index);
        return;
      case 'drained':
        this.threads.drained(index);
        return;
      default:
    }
  }

  /** A session's bookkeeping ends here (its thread has queued its messages): groups, account, cluster, closed event. */
  private closed(e: Entry, code: number, reason: string): void {
    if (!this.sessions.delete(e.id)) return;
    this.groups.leaveAll(e);
    const account = this.onSessionClosed(e.id);
    this.remote?.closed(e.id);
    if (this.handlers.closed.length > 0) {
      const info: SessionClosedInfo = { sessionId: e.id, code, reason, account };
      pushEngineEvent(CLOSED_EVENT, e.id, info);
    }
  }

  /** The session, or undefined; a session of this server's threads not yet noted is looked for in its thread's notes. */
  private entry(sessionId: number): Entry | undefined {
    const e = this.sessions.get(sessionId);
    if (e !== undefined) return e;
    const owner = ioThreadOf(sessionId);
    if (owner >= this.threads.size) return undefined;
    this.readNotes(owner);
    return this.sessions.get(sessionId);
  }

  /** Where a session's operations go: its thread's next batch. */
  private batchOf(e: Entry): IoBatchWriter {
    return this.threads.batch(e.thread);
  }

  /** A command for every thread, after the operations routed so far. */
  private post(command: IoCommand): void {
    this.threads.post(command);
  }

  private dropped(count = 1): void {
    if (count === 0) return;
    this.own.droppedNoSession += count;
    native.counterIncrease('engine', 'dropped_sends_no_session', count);
  }

  get maintenanceFrame(): ((codec: CodecName) => string | Uint8Array) | null {
    return this.maintenance;
  }

  /** The gate and the announcement travel in one command, applied by each thread in one step. */
  setMaintenance(gate: ((codec: CodecName) => string | Uint8Array) | null, announce: ((codec: CodecName) => string | Uint8Array) | null): void {
    this.maintenance = gate;
    const frames = announce === null ? null : { json: announce('json'), msgpack: announce('msgpack') };
    if (gate === null) this.post({ kind: 'maintenance-off', announce: frames });
    else this.post({ kind: 'maintenance', json: gate('json'), msgpack: gate('msgpack'), announce: frames });
  }

  send(sessionId: number, frame: string | Uint8Array): boolean {
    const e = this.entry(sessionId);
    if (e === undefined) {
      if (this.remote !== null) this.remote.send(sessionId, frame);
      else this.dropped();
      return false;
    }
    if (this.stopping) {
      this.dropped();
      return false;
    }
    this.batchOf(e).send(sessionId, frame, e.codec === 'msgpack');
    return true;
  }

  deliver(sessionId: number, frames: readonly Uint8Array[]): boolean {
    const e = this.entry(sessionId);
    if (e === undefined || this.stopping) {
      this.dropped(frames.length);
      return false;
    }
    const batch = this.batchOf(e);
    for (const f of frames) batch.send(sessionId, f, e.codec === 'msgpack');
    return true;
  }

  sendOne(sessionId: number, frame: Uint8Array, binary: boolean): void {
    const e = this.entry(sessionId);
    if (e !== undefined) {
      if (this.stopping) this.dropped();
      else this.batchOf(e).send(sessionId, frame, binary);
    } else if (this.remote !== null) this.remote.send(sessionId, frame);
    else this.dropped();
  }

  sendRun(sessionId: number, frames: (write: (frame: Uint8Array, binary: boolean) => void) => void): void {
    const e = this.entry(sessionId);
    if (e === undefined) {
      const remote = this.remote;
      if (remote !== null) frames((frame) => remote.send(sessionId, frame));
      else frames(() => this.dropped());
      return;
    }
    if (this.stopping) {
      frames(() => this.dropped());
      return;
    }
    const batch = this.batchOf(e);
    frames((frame, binary) => batch.send(sessionId, frame, binary));
  }

  error(message: string): void {
    this.thread.log.error(message);
  }

  end(sessionId: number, code: number, reason: string): boolean {
    const e = this.entry(sessionId);
    if (e === undefined) return false;
    this.batchOf(e).close(sessionId, code, reason);
    return true;
  }

  close(sessionId: number, code: number, reason: string): void {
    if (!this.end(sessionId, code, reason)) this.remote?.close(sessionId, code, reason);
  }

  sendAll(frameOf: (codec: CodecName) => string | Uint8Array): void {
    if (this.stopping) {
      this.dropped(this.sessions.size);
      return;
    }
    const json = bytesOf(frameOf('json'));
    const msgpack = bytesOf(frameOf('msgpack'));
    for (const batch of this.threads.batches()) batch.all(json, msgpack);
  }

  broadcast(sessionIds: readonly number[] | null, json: Uint8Array, msgpack: Uint8Array): void {
    if (sessionIds === null) {
      this.sendAll((codec) => (codec === 'json' ? json : msgpack));
      this.remote?.broadcastAll(json, msgpack);
      return;
    }
    const perThread: number[][] = [];
    for (const id of sessionIds) {
      const e = this.entry(id);
      if (e === undefined) {
        if (this.remote !== null) this.remote.send(id, id % 2 === 1 ? msgpack : json);
        else this.dropped();
      } else (perThread[e.thread] ??= []).push(id);
    }
    this.toThreads(perThread, json, msgpack);
  }

  /** `members`: the ids are a group's (a member that closed on its thread since is no drop there). */
  private toThreads(perThread: number[][], json: Uint8Array, msgpack: Uint8Array, members = false): void {
    if (this.stopping) {
      this.dropped(perThread.reduce((n, ids) => n + ids.length, 0));
      return;
    }
    perThread.forEach((ids, thread) => {
      if (ids.length === 0) return;
      this.threads.batch(thread).ids(ids, json, msgpack, members);
    });
  }

  group(sessionId: number, group: string, join: boolean): void {
    if (!this.groupLocal(sessionId, group, join)) this.remote?.group(sessionId, group, join);
  }

  groupLocal(sessionId: number, group: string, join: boolean): boolean {
    const e = this.entry(sessionId);
    if (e === undefined) return false;
    this.groups.set(e, group, join);
    return true;
  }

  groupNames(): string[] {
    return this.groups.names();
  }

  groupSize(group: string): number {
    return this.groups.size(group);
  }

  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void {
    this.publishLocal(group, json, msgpack);
    this.remote?.publish(group, json, msgpack);
  }

  publishLocal(group: string, json: Uint8Array, msgpack: Uint8Array): void {
    const members = this.groups.of(group);
    // Each frame is logged where it is written (the I/O thread).
    if (this.logLevel > 0) this.thread.log.info(`session publish: group=${group}, members=${members.length}`);
    const perThread: number[][] = [];
    for (const m of members) (perThread[m.thread] ??= []).push(m.id);
    this.toThreads(perThread, json, msgpack, true);
  }

  /** Stops listening and closes every session with 1001; resolves once their closed events are queued. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    await this.threads.stop(() => {
      for (let i = 0; i < this.threads.size; i++) this.readNotes(i);
      this.applyDeferred();
    });
    for (const e of [...this.sessions.values()]) this.lost(e, 1001, 'server stopping');
  }

  /** A session whose thread ended without closing it (the thread's count of it goes too). */
  private lost(e: Entry, code: number, reason: string): void {
    if (!this.sessions.has(e.id)) return;
    native.counterDecrease('engine', 'sessions', 1);
    this.own.closed++; // the thread's own row counted it opened
    this.closed(e, code, reason);
  }
}
