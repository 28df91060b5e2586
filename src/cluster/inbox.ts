/**
 * This server's stream (main thread): a loop of `XREAD BLOCK` on the reader connection applies
 * every batch other servers wrote for it, in stream order, which is each sender's order.
 *
 * Each entry names its sender, the sender's process (epoch), its batch number and a sequence
 * number per (sender, receiver). A batch number seen before is a resend after a lost answer and
 * is skipped; a jump in the sequence means batches never arrived (trimmed from a stream that
 * was not read, or lost with a Redis restart) and is logged and counted. Read entries are
 * trimmed away, so the stream holds only what is unread.
 */
import type { Logger } from '../log/logger.ts';
import { describeError } from '../errors.ts';
import type { ClusterConfig } from './config.ts';
import { describeRecord } from './message-log.ts';
import { applyRecords, eachRecord, type RecordSink } from './records.ts';
import type { RedisLink } from './redis-link.ts';
import { Rpc, type ClusterStats } from './stats.ts';

type Entry = [id: Buffer, fields: Buffer[]];
type XReadReply = Array<[key: Buffer, entries: Entry[]]> | null;

interface SourceState {
  epoch: string;
  lastBatch: number;
  lastSeq: number;
}

const READ_COUNT = 256;
const BLOCK_MS = 1000;
const TRIM_EVERY_MS = 100;

export class Inbox {
  private lastId = '0-0';
  private stopped = false;
  private running: Promise<void> | null = null;
  private readonly sources = new Map<string, SourceState>();
  private trimTimer: NodeJS.Timeout | null = null;
  private logLevel = 0;
  private key = '';

  constructor(private readonly link: RedisLink, private readonly cfg: ClusterConfig, private readonly stats: ClusterStats,
    private readonly log: Logger, private readonly sink: RecordSink) {}

  set messageLogLevel(level: number) {
    this.logLevel = level;
  }

  /** Starts reading server `self`'s stream from its beginning. */
  start(self: string): void {
    this.key = `${this.cfg.prefix}stream:${self}`;
    this.running ??= this.loop();
  }

  /** Redis restarted without its data: the stream is new, so read it from its beginning. */
  restarted(): void {
    this.lastId = '0-0';
  }

  private async loop(): Promise<void> {
    const reader = this.link.reader;
    while (!this.stopped) {
      let reply: XReadReply;
      try {
        reply = await reader.xreadBuffer('COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', this.key, this.lastId) as XReadReply;
      } catch (err) {
        if (this.stopped) break;
        // The connection is away: wait until ioredis has it back (or a second passes).
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, BLOCK_MS);
          reader.once('ready', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        if (reader.status !== 'ready') this.log.vlog(1, `Cluster: reading the stream failed: ${describeError(err)}`);
        continue;
      }
      if (reply === null || this.stopped) continue;
      // The next read goes out once these are applied. Sent before, it saves a batch written
      // meanwhile one round trip, but wakes Redis while this thread writes the frames, and on
      // busy cores that cost more than it saved (bench/README.md, cluster).
      for (const [, entries] of reply) {
        for (const [id, fields] of entries) {
          this.lastId = id.toString();
          this.entry(fields);
        }
      }
      this.scheduleTrim();
    }
  }

  private entry(fields: Buffer[]): void {
    let from = '', epoch = '', batch = 0, seq = 0;
    let data: Buffer | null = null;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      switch (fields[i]!.toString()) {
        case 's': from = fields[i + 1]!.toString(); break;
        case 'e': epoch = fields[i + 1]!.toString(); break;
        case 'b': batch = Number(fields[i + 1]!.toString()); break;
        case 'q': seq = Number(fields[i + 1]!.toString()); break;
        case 'd': data = fields[i + 1]!; break;
      }
    }
    if (data === null || from === '') {
      this.stats.rpc(Rpc.badBatches);
      this.log.error(`Cluster: a stream entry without sender or data was skipped (from='${from}')`);
      return;
    }
    let source = this.sources.get(from);
    if (source === undefined || source.epoch !== epoch) {
      // A new process with that id numbers from 1 again (its start removed the old numbers).
      source = { epoch, lastBatch: 0, lastSeq: 0 };
      this.sources.set(from, source);
    }
    this.checkSequence(from, source, seq);
    if (batch <= source.lastBatch) {
      this.stats.rpc(Rpc.duplicateBatches);
      return;
    }
    source.lastBatch = batch;
    this.stats.rpc(Rpc.batchesReceived);
    this.stats.rpc(Rpc.bytesReceived, data.length);
    if (this.logLevel > 0) {
      for (const { kind, body } of eachRecord(data)) this.log.info(`rpc message in: from=${from}, ${describeRecord(kind, body, this.logLevel)}`);
    }
    try {
      this.stats.rpc(Rpc.messagesReceived, applyRecords(data, this.sink, (why) => {
        this.stats.rpc(Rpc.badRecords);
        this.log.error(`Cluster: a record from server ${from} was skipped: ${why}`);
      }));
    } catch (err) {
      this.stats.rpc(Rpc.badBatches);
      this.log.error(`Cluster: a batch from server ${from} could not be read to its end: ${describeError(err)}`);
    }
  }

  private checkSequence(from: string, source: SourceState, seq: number): void {
    const expected = source.lastSeq + 1;
    source.lastSeq = seq;
    if (expected === 1 || seq === expected) return;
    if (seq === 1) {
      // The counter started again: Redis lost its data, and with it any batch of this sender's
      // it held that this server had not read yet (how many, nobody can tell).
      this.stats.rpc(Rpc.sequenceRestarts);
      this.log.warn(`Cluster: the batch sequence of server ${from} started again after ${expected - 1} (Redis lost its data); ` +
        'batches it had written and this server had not read are lost');
      return;
    }
    if (seq > expected) {
      const lost = seq - expected;
      this.stats.rpc(Rpc.lostBatches, lost);
      this.log.error(`Cluster: ${lost} batch(es) from server ${from} never arrived (sequence ${expected} to ${seq - 1}): ` +
        'trimmed from an unread stream (stream_max_length) or lost with Redis');
    }
  }

  private scheduleTrim(): void {
    if (this.trimTimer !== null) return;
    this.trimTimer = setTimeout(() => {
      this.trimTimer = null;
      if (!this.link.up || this.stopped) return;
      const upTo = this.lastId;
      this.link.command('trim of the stream', (r) => r.xtrim(this.key, 'MINID', upTo)).catch(() => undefined);
    }, TRIM_EVERY_MS);
    this.trimTimer.unref();
  }

  /** Stops the loop (the reader connection is closed by the link). */
  stop(): void {
    this.stopped = true;
    if (this.trimTimer !== null) clearTimeout(this.trimTimer);
  }
}
