/**
 * The writer thread (a worker_thread of its own, not an event thread): receives every commit
 * request, applies them in group transactions, updates the object cache once a group is
 * durable and answers each request then.
 */
import { BroadcastChannel, parentPort, workerData } from 'node:worker_threads';
import { native } from '../native.ts';
import { describeError } from '../errors.ts';
import { buildFlags } from '../config/flag-setup.ts';
import { createLogger } from '../log/logger.ts';
import type { ComponentArgs } from '../config/manifest.ts';
import { databaseLabel, type StoreConfig } from './config.ts';
import { Model, type TypeInfo } from './model.ts';
import { helloChannelName, type HelloMessage } from './channel.ts';
import { OpKind, Status, type CommitReply, type CommitRequest, type GroupWriter, type Outcome } from './storage.ts';
import { SqliteWriter } from './sqlite-store.ts';
import { PostgresWriter } from './postgres-store.ts';
import { GroupStats } from './stats.ts';

/** workerData of the writer thread. */
export interface WriterInit {
  /** This file (loaded by writer-boot.mjs). */
  entry: string;
  config: StoreConfig;
  components: Record<string, ComponentArgs>;
  logFile: string;
  logFormat: 'text' | 'json';
}

/** Main → writer. */
export type WriterCommand = { stop: true };
/** Writer → main. */
export type WriterEvent = { ready: true } | { failed: string } | { stopped: true };

interface Pending {
  request: CommitRequest;
  channel: BroadcastChannel;
}

const init = workerData as WriterInit;
const config = init.config;
const log = createLogger(buildFlags(init.components), { file: init.logFile, format: init.logFormat });
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

function attach(name: string): void {
  // A thread repeats its hello until it hears back: answer again, never open a second channel
  // (two of the writer's own channels of one name would hear each other and every request twice).
  let channel = channels.get(name);
  if (!channel) {
    const opened = channel = new BroadcastChannel(name);
    opened.onmessage = (event) => {
      if (!Array.isArray(event.data)) return;
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

/** Makes a durable group visible: new versions into the cache, stale copies out. */
function publish(group: readonly Pending[], outcomes: readonly Outcome[]): void {
  for (let i = 0; i < group.length; i++) {
    const status = outcomes[i]!.status;
    for (const [kind, typeIndex, id, version, bytes, uniques] of group[i]!.request.ops) {
      if (status === Status.conflict) {
        if (version > 0) native.objCacheInvalidate(typeIndex, id, version);
        continue;
      }
      if (status !== Status.ok) continue;
      if (kind === OpKind.create || kind === OpKind.update) {
        native.objCachePut(typeIndex, id, kind === OpKind.create ? 1 : version + 1, bytes!);
        const unique = types[typeIndex]!.unique;
        for (let u = 0; u < unique.length; u++) {
          const value = uniques?.[u];
          if (value !== null && value !== undefined) native.objCachePutKey(typeIndex, u, String(value), id);
        }
      } else if (kind === OpKind.delete) {
        native.objCachePutDeleted(typeIndex, id, version + 1);
      }
    }
  }
}

function reply(group: readonly Pending[], outcomes: readonly Outcome[]): void {
  const byChannel = new Map<BroadcastChannel, CommitReply[]>();
  for (let i = 0; i < group.length; i++) {
    const { request, channel } = group[i]!;
    let list = byChannel.get(channel);
    if (!list) byChannel.set(channel, list = []);
    list.push([request.id, outcomes[i]!.status, outcomes[i]!.reason]);
  }
  for (const [channel, replies] of byChannel) channel.postMessage(replies);
}

async function runGroups(): Promise<void> {
  running = true;
  try {
    while (pending.length > 0) {
      const group = pending.length <= config.groupMaxEvents ? pending : pending.slice(0, config.groupMaxEvents);
      pending = group === pending ? [] : pending.slice(group.length);
      const start = performance.now();
      let outcomes: Outcome[];
      try {
        outcomes = await backend.applyGroup(group.map((p) => p.request), types);
      } catch (err) {
        const failed: Outcome = { status: Status.error, reason: describeError(err) };
        outcomes = group.map(() => failed);
      }
      const seconds = (performance.now() - start) / 1000;
      const slow = seconds > config.slowQuerySec;
      publish(group, outcomes);
      stats.group(group.length, seconds, outcomes, pending.length, slow);
      reply(group, outcomes);
      if (slow) {
        log.warn(`Slow query: database=${databaseLabel(config)}, query=commit of ${group.length} event(s), time=${seconds.toFixed(3)}s`);
      }
      for (const o of outcomes) {
        if (o.status === Status.error) log.error(`GSF_ERR_OBJECT_STORE: object store: a commit failed: ${o.reason}`);
      }
    }
  } finally {
    running = false;
  }
  if (stopping) await finish();
}

async function finish(): Promise<void> {
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
  if (command.stop) {
    stopping = true;
    // Requests already posted by event threads arrive before a message sent after them.
    setImmediate(() => void finish());
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
