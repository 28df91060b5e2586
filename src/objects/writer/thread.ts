/**
 * The writer thread (a worker_thread of its own, not an event thread): receives every commit
 * request, applies them in group transactions, updates the object cache once a group is
 * durable and answers each request then.
 */
import { BroadcastChannel, parentPort, workerData } from 'node:worker_threads';
import { native } from '../../native.ts';
import { describeError } from '../../errors.ts';
import { buildFlags } from '../../config/flag-setup.ts';
import { createLogger } from '../../log/logger.ts';
import type { ArgValue } from '../../config/manifest.ts';
import { databaseLabel } from '../config.ts';
import { Model, type TypeInfo } from '../model.ts';
import { channelNamePrefix, helloChannelName, type HelloMessage } from '../channel.ts';
import { LEFT_OUT, Status, type CommitOp, type CommitReply, type CommitRequest, type GroupWriter, type Outcome } from '../storage.ts';
import { SqliteWriter } from '../sqlite-store.ts';
import { PostgresWriter } from '../postgres-store.ts';
import { GroupStats } from '../stats.ts';
import { noteChannelThread, noteOrphanedCommits, threadGone } from './orphans.ts';
import { ObjectTurns, type Waiting } from './turns.ts';
import { stampCreates } from './versions.ts';
import { publishGroup } from './publish.ts';
import type { WriterInit, WriterCommand, WriterEvent } from './messages.ts';

interface Pending {
  request: CommitRequest;
  channel: BroadcastChannel;
  /** It waited for an older event's reservation. */
  waited?: boolean;
}

const init = workerData as WriterInit;
const config = init.config;
const flags = buildFlags(init.components);
let configVersion = -1;
// The levels as set at run time (REST): read from the process's settings when they changed.
const log = createLogger({
  get(name: string): unknown {
    const version = native.configVersion();
    if (version !== configVersion) {
      configVersion = version;
      flags.load(JSON.parse(native.configGet()) as Record<string, ArgValue>);
    }
    return flags.get(name);
  },
}, { file: init.logFile, format: init.logFormat, thread: 'object-writer' });
const model = new Model(config.schema);
const types: readonly TypeInfo[] = model.types;
const stats = new GroupStats(databaseLabel(config));
const port = parentPort!;

let pending: Pending[] = [];
let running = false;
let scheduled = false;
let stopping = false;
let backend: GroupWriter;
const channels = new Map<string, BroadcastChannel>();
/** Channels closed because their event thread ended: replies for them go nowhere. */
const letGo = new WeakSet<BroadcastChannel>();
function attach(name: string): void {
  // A thread repeats its hello until it hears back: answer again, never open a second channel
  // (two of the writer's own channels of one name would hear each other and every request twice).
  let channel = channels.get(name);
  if (!channel) {
    const opened = channel = new BroadcastChannel(name);
    const thread = Number(name.slice(channelNamePrefix(config.instance).length).split(':')[0]);
    opened.onmessage = (event) => {
      if (!Array.isArray(event.data)) return;
      noteChannelThread(opened, thread);
      for (const request of event.data as CommitRequest[]) pending.push({ request, channel: opened });
      stats.queued(pending.length);
      schedule();
    };
    channels.set(name, opened);
  }
  channel.postMessage({ ready: true });
}

function schedule(): void {
  if (running || scheduled) return;
  scheduled = true;
  // After the loop's poll phase: every request that arrived meanwhile joins the group.
  setImmediate(() => {
    scheduled = false;
    void runGroups();
  });
}

/** Makes a durable group visible (`publishGroup`); the main thread hears what to announce. */
function publish(group: readonly Pending[], outcomes: readonly Outcome[]): void {
  const committed = publishGroup(group.map((p) => p.request), outcomes, types, config.announceCommits);
  if (committed !== null && committed.length > 0) port.postMessage({ committed } satisfies WriterEvent);
}

function reply(answers: ReadonlyArray<Waiting<Pending>>): void {
  const byChannel = new Map<BroadcastChannel, CommitReply[]>();
  for (const { p, outcome } of answers) {
    let list = byChannel.get(p.channel);
    if (!list) byChannel.set(p.channel, list = []);
    list.push([p.request.id, outcome.status, outcome.reason, p.waited === true ? 1 : 0]);
  }
  for (const [channel, replies] of byChannel) {
    if (!letGo.has(channel)) channel.postMessage(replies);
  }
}

/**
 * An event thread ended (a reload or resize retired it, or a timeout ended it): its channels
 * close, or the writer would hold one for every thread since the start. What it committed
 * before it ended is still written (its requests arrive before this news: see the caller).
 */
function threadEnded(threadId: number): void {
  const prefix = `${channelNamePrefix(config.instance)}${threadId}:`;
  for (const [name, channel] of channels) {
    if (!name.startsWith(prefix)) continue;
    channels.delete(name);
    letGo.add(channel);
    channel.close();
  }
}

/**
 * Conflicts converge. Events whose commits conflicted on one object take turns on it
 * (turns.ts): one reruns at a time, the others' conflict answers wait in line. The event
 * whose turn it is gets the objects it wanted reserved for its next attempt, and until then
 * (or `RESERVE_MS`) younger events' commits on them wait here, then conflict and join the line.
 * The older event (smaller id) always wins a reservation, so no two events can hold each other
 * up. Without this, many events racing for one hot object rerun quadratically, and past their
 * limit. `api.objects.transact` takes its owner id from the same sequence; a commit with owner
 * 0 neither waits nor takes turns or reservations.
 */
const RESERVE_MS = 250;
const reservations = new Map<string, { owner: number; until: number }>();
const turns = new ObjectTurns<Pending>(RESERVE_MS);
let turnTimer: NodeJS.Timeout | null = null;

/** The object a conflict is about (its turn), or null. */
function turnKey(outcome: Outcome): string | null {
  return outcome.status === Status.conflict && outcome.stale !== undefined ? objectKey(outcome.stale) : null;
}

/** Answers whose turn came: their events rerun now, with what they wanted reserved. */
function grant(granted: ReadonlyArray<Waiting<Pending>>, now: number): void {
  if (granted.length === 0) return;
  for (const { p } of granted) reserveFor(p.request, now);
  reply(granted);
}

/** Passes the turns of events that did not come back in time, while answers wait for them. */
function watchTurns(): void {
  if (turns.waiting === 0 || turnTimer !== null) return;
  turnTimer = setTimeout(() => {
    turnTimer = null;
    const granted: Array<Waiting<Pending>> = [];
    const now = Date.now();
    turns.expire(now, granted);
    grant(granted, now);
    if (granted.length > 0) stats.queued(pending.length + blocked.length + turns.waiting);
    watchTurns();
  }, RESERVE_MS / 2);
}

function objectKey(op: CommitOp): string {
  return `${op[1]}:${op[2]}`;
}

/** Requests that wait for a reservation of an older event to end. */
let blocked: Pending[] = [];
let blockedTimer: NodeJS.Timeout | null = null;

/** Whether a request touches an object reserved for an older event. */
function isBlocked(request: CommitRequest, now: number): boolean {
  if (request.owner === 0 || stopping) return false;
  for (const op of request.ops) {
    const r = reservations.get(objectKey(op));
    if (r !== undefined && r.owner < request.owner && r.until > now) return true;
  }
  return false;
}

/** Requests whose reservations ended go back ahead of the queue (they arrived earlier). */
function unblock(now: number): void {
  if (blocked.length === 0) return;
  const free = blocked.filter((p) => !isBlocked(p.request, now));
  if (free.length === 0) return;
  blocked = blocked.filter((p) => !free.includes(p));
  pending = [...free, ...pending];
}

/** Looks again at blocked requests once the reservations they wait for may have expired. */
function watchBlocked(): void {
  if (blocked.length === 0 || blockedTimer !== null) return;
  blockedTimer = setTimeout(() => {
    blockedTimer = null;
    unblock(Date.now());
    if (pending.length > 0) schedule();
    watchBlocked();
  }, RESERVE_MS);
}

/** The event whose turn it is reserves what it wanted, unless an older event holds it. */
function reserveFor(request: CommitRequest, now: number): void {
  for (const op of request.ops) {
    const key = objectKey(op);
    const r = reservations.get(key);
    if (r === undefined || r.until <= now || r.owner >= request.owner) reservations.set(key, { owner: request.owner, until: now + RESERVE_MS });
  }
}

/** Frees what the event of `request` reserved among its objects. */
function unreserve(request: CommitRequest): void {
  for (const op of request.ops) {
    const key = objectKey(op);
    if (reservations.get(key)?.owner === request.owner) reservations.delete(key);
  }
}

/**
 * After a group: events that committed (or failed) free their reservations and turns; each
 * conflict is answered now (its event has the turn, and reserves what it wanted) or waits in
 * line. Returns the answers that go now, those whose turn came included.
 */
function settle(group: readonly Pending[], outcomes: readonly Outcome[], now: number): Array<Waiting<Pending>> {
  const answers: Array<Waiting<Pending>> = [];
  const granted: Array<Waiting<Pending>> = [];
  for (let i = 0; i < group.length; i++) {
    const p = group[i]!;
    const outcome = outcomes[i]!;
    const { request } = p;
    if (request.owner === 0) {
      answers.push({ p, outcome });
      continue;
    }
    if (outcome.status !== Status.conflict) unreserve(request);
    if (!turns.settle(p, outcome, stopping ? null : turnKey(outcome), now, granted)) {
      // In line, it will not commit before its turn: what it reserved would only hold up the
      // events ahead of it (the one whose turn it is may need the same objects).
      unreserve(request);
      continue;
    }
    if (outcome.status === Status.conflict) reserveFor(request, now);
    answers.push({ p, outcome });
  }
  turns.expire(now, granted);
  for (const { p } of granted) reserveFor(p.request, now);
  if (reservations.size > 10_000) for (const [key, r] of reservations) if (r.until <= now) reservations.delete(key);
  watchTurns();
  return granted.length === 0 ? answers : [...answers, ...granted];
}

const NOTHING: Outcome = { status: Status.ok, reason: '' };

/** Applies a group; requests without operations (an event letting go of its turn) touch no database. */
async function apply(admitted: readonly Pending[]): Promise<Outcome[]> {
  const work = admitted.filter((p) => p.request.ops.length > 0);
  if (work.length === 0) return admitted.map(() => NOTHING);
  stampCreates(work.map((p) => p.request));
  try {
    // Asked again once the database is ready for the group: SQLite may wait long for its lock.
    const done = await backend.applyGroup(work.map((p) => p.request), types, (i) => threadGone(work[i]!.channel));
    if (work.length === admitted.length) return done;
    let k = 0;
    return admitted.map((p) => (p.request.ops.length > 0 ? done[k++]! : NOTHING));
  } catch (err) {
    const failed: Outcome = { status: Status.error, reason: describeError(err) };
    return admitted.map((p) => (p.request.ops.length > 0 ? failed : NOTHING));
  }
}

async function runGroups(): Promise<void> {
  running = true;
  try {
    while (pending.length > 0) {
      let group = pending.length <= config.groupMaxEvents ? pending : pending.slice(0, config.groupMaxEvents);
      pending = group === pending ? [] : pending.slice(group.length);
      // Commits of events abandoned with their thread are not made: those events were answered
      // as dropped, and their counter changes and invokes are gone.
      const orphans = group.filter((p) => p.request.ops.length > 0 && threadGone(p.channel));
      if (orphans.length > 0) {
        group = group.filter((p) => !orphans.includes(p));
        log.vlog(1, `object writer: ${orphans.length} commit(s) not made: their event thread ended while they waited`);
        if (group.length === 0) continue;
      }
      const start = performance.now();
      const now = Date.now();
      const admitted = group.filter((p) => !isBlocked(p.request, now));
      if (admitted.length < group.length) {
        for (const p of group) {
          if (admitted.includes(p)) continue;
          p.waited = true;
          blocked.push(p);
        }
        watchBlocked();
        if (admitted.length === 0) continue;
      }
      const outcomes = await apply(admitted);
      const answers = settle(admitted, outcomes, Date.now());
      unblock(Date.now());
      const seconds = (performance.now() - start) / 1000;
      const slow = seconds > config.slowQuerySec;
      publish(admitted, outcomes);
      // Requests without operations (an event letting go of its turn) are no commits.
      const counted = outcomes.filter((o, i) => admitted[i]!.request.ops.length > 0 && o !== LEFT_OUT);
      if (counted.length > 0) stats.group(counted.length, seconds, counted, pending.length + blocked.length + turns.waiting, slow);
      else stats.queued(pending.length + blocked.length + turns.waiting);
      reply(answers);
      noteOrphanedCommits(log, admitted, outcomes);
      if (slow) {
        log.warn(`Slow query: database=${databaseLabel(config)}, query=commit of ${admitted.length} event(s), time=${seconds.toFixed(3)}s`);
      }
      for (const o of outcomes) {
        // A store's reasons may say 'commit failed' already.
        if (o.status === Status.error) log.error(`GSF_ERR_OBJECT_STORE: object store: a commit failed: ${o.reason.replace(/^commit failed: /, '')}`);
      }
    }
  } finally {
    running = false;
  }
  if (stopping) await finish();
}

async function finish(): Promise<void> {
  // Stopping: conflicts waiting for their turn are answered, and requests that wait for a
  // reservation go now (nothing waits any more).
  if (turns.waiting > 0) {
    const granted: Array<Waiting<Pending>> = [];
    turns.drain(granted);
    reply(granted);
  }
  if (turnTimer !== null) clearTimeout(turnTimer);
  turnTimer = null;
  if (blocked.length > 0) {
    pending = [...blocked, ...pending];
    blocked = [];
    if (blockedTimer !== null) clearTimeout(blockedTimer);
    blockedTimer = null;
    schedule();
    return;
  }
  if (running || pending.length > 0) return;
  for (const c of channels.values()) c.close();
  hello?.close();
  try {
    await backend.close();
  } catch (err) {
    log.error(`object store: closing the database failed: ${describeError(err)}`);
  }
  port.postMessage({ stopped: true } satisfies WriterEvent);
  port.close();
}

let hello: BroadcastChannel | null = null;

port.on('message', (command: WriterCommand) => {
  // Requests already posted by event threads arrive before a message sent after them.
  if ('stop' in command) {
    stopping = true;
    setImmediate(() => void finish());
  } else {
    setImmediate(() => threadEnded(command.threadEnded));
  }
});

async function open(): Promise<void> {
  try {
    if (config.backend === 'sqlite') {
      backend = new SqliteWriter(config, types);
    } else {
      const pg = new PostgresWriter(config, types);
      backend = pg;
      await pg.ready();
    }
    // Threads are heard only once the database is open.
    hello = new BroadcastChannel(helloChannelName(config.instance));
    hello.onmessage = (event) => attach((event.data as HelloMessage).channel);
    port.postMessage({ ready: true } satisfies WriterEvent);
  } catch (err) {
    port.postMessage({ failed: describeError(err) } satisfies WriterEvent);
  }
}

void open();
