/**
 * How the outbox builds one batch (main thread): operations in order, each with its kind, its
 * key and its payload, as the routing script reads them (`scripts.ts`).
 *
 * Records for a session whose server is known go straight to that server (`D` ops): once the
 * routing script has found a session's server it says so, and this server remembers it (a
 * session never moves; a closed one is dropped by its server). Consecutive direct records are
 * kept per destination, one payload each, so a busy batch costs Redis one append per server
 * rather than one lookup per message. Any other operation closes that run first, so every
 * session still gets its records in the order they were made.
 */
import { RecordWriter } from './records.ts';

export type OpKind = 'S' | 'D' | 'G' | 'A' | 'V' | 'O' | 'C' | 'J' | 'L' | 'K' | 'R';

export interface Op {
  kind: OpKind;
  key: string;
  /** The records (or, for presence ops, the text) the op carries. */
  payload: Buffer | string;
  /** Messages (records) the op carries. */
  messages: number;
  /** V and K ops: receives the script's answer, or the error that ended the op. */
  answer?: (value: unknown, err?: Error) => void;
  cancelled?: boolean;
  /** Part of the batch in flight now. */
  sent?: boolean;
  /**
   * Its answer's time ran out while it was in flight: if that batch fails and goes back to
   * wait for Redis, this ends the op (it is not sent again).
   */
  expire?: () => void;
}

/** Sessions remembered at most; past this the memory starts afresh. */
const MAX_OWNERS = 200_000;

export class BatchBuilder {
  private ops: Op[] = [];
  private messages = 0;
  /** Records of the current run of direct ops, per destination server. */
  private readonly direct = new Map<string, { writer: RecordWriter; messages: number }>();
  /** Writers of past runs, reused (a writer starts with a 64 KiB buffer). */
  private readonly spare = new Map<string, RecordWriter>();
  /** Which server holds a session, as the routing script answered. */
  private readonly owners = new Map<number, string>();
  /** Sessions of servers whose presence expired (they may come back): for the log's cause. */
  private readonly away = new Map<number, string>();
  private readonly awayServers = new Set<string>();
  private readonly writer = new RecordWriter();

  get empty(): boolean {
    return this.ops.length === 0 && this.direct.size === 0;
  }

  /** Records for one session: straight to its server when known, else looked up by the script. */
  session(sessionId: number, write: (w: RecordWriter) => void): void {
    const server = this.owners.get(sessionId);
    if (server !== undefined) {
      let run = this.direct.get(server);
      if (run === undefined) this.direct.set(server, run = { writer: this.spare.get(server) ?? new RecordWriter(), messages: 0 });
      write(run.writer);
      run.messages++;
      this.messages++;
      return;
    }
    const key = String(sessionId);
    const last = this.ops[this.ops.length - 1];
    write(this.writer);
    const records = this.writer.take();
    // Consecutive records for one unknown session travel as one op.
    if (this.direct.size === 0 && last !== undefined && last.kind === 'S' && last.key === key) {
      last.payload = Buffer.concat([last.payload as Buffer, records]);
      last.messages++;
    } else {
      this.push({ kind: 'S', key, payload: records, messages: 1 });
    }
    this.messages++;
  }

  /** Records for a group's members, every server, or one server. */
  records(kind: 'G' | 'A' | 'V', key: string, write: (w: RecordWriter) => void, answer?: Op['answer']): void {
    write(this.writer);
    this.push({ kind, key, payload: this.writer.take(), messages: 1, answer });
    this.messages++;
  }

  /** A presence operation (no messages). */
  presence(kind: 'O' | 'C' | 'J' | 'L' | 'K' | 'R', key: string, text: string, answer?: Op['answer']): Op {
    const op: Op = { kind, key, payload: text, messages: 0, answer };
    this.push(op);
    return op;
  }

  private push(op: Op): void {
    this.closeRun();
    this.ops.push(op);
  }

  /** Ends the run of direct records: one op per destination. */
  private closeRun(): void {
    if (this.direct.size === 0) return;
    for (const [server, run] of this.direct) {
      this.ops.push({ kind: 'D', key: server, payload: run.writer.take(), messages: run.messages });
      this.spare.set(server, run.writer);
    }
    this.direct.clear();
  }

  /** The batch's ops, and how many messages they carry; the builder starts afresh. */
  take(): { ops: Op[]; messages: number } {
    this.closeRun();
    const out = { ops: this.ops, messages: this.messages };
    this.ops = [];
    this.messages = 0;
    return out;
  }

  /** The routing script found these sessions' servers: `[session, server, …]`. */
  learn(pairs: readonly string[]): void {
    if (this.owners.size + pairs.length / 2 > MAX_OWNERS) this.owners.clear();
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const server = pairs[i + 1]!;
      this.owners.set(Number(pairs[i]), server);
      if (this.awayServers.has(server)) this.back(server);
    }
  }

  /**
   * A server is not live: its sessions are looked up again (they are nowhere now). When its
   * presence expired (`expired`), they are remembered as its, to say so when they stay unroutable.
   */
  forgetServer(server: string, expired = false): void {
    if (expired && this.away.size >= MAX_OWNERS) this.away.clear();
    for (const [session, s] of this.owners) {
      if (s !== server) continue;
      this.owners.delete(session);
      if (expired) this.away.set(session, server);
    }
    if (expired) this.awayServers.add(server);
    this.spare.delete(server);
  }

  /** The server whose presence expired while it held this session, if any. */
  awayServer(sessionId: number): string | undefined {
    return this.away.get(sessionId);
  }

  /** A server is live again: its sessions are found by the script again. */
  back(server: string): void {
    if (!this.awayServers.delete(server)) return;
    for (const [session, s] of this.away) if (s === server) this.away.delete(session);
  }
}
