/**
 * How event threads reach the writer thread: every thread opens a BroadcastChannel of its own
 * (`gsf-objects:<instance>:<thread>`, shared with the writer only) and announces it once on the
 * hello channel. Requests of one turn of the thread's loop travel as one message; replies of
 * one commit group come back as one message per thread.
 */
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { gsfError } from '../errors.ts';
import type { CommitOp, CommitReply, CommitRequest } from './storage.ts';

/** Channel names of a writer instance. */
/** The start of every thread channel's name: the thread id and a random part follow. */
export function channelNamePrefix(instance: string): string {
  return `gsf-objects:${instance}:`;
}

export function helloChannelName(instance: string): string {
  return `gsf-objects:${instance}:hello`;
}

/** Thread → writer on the hello channel. */
export interface HelloMessage {
  channel: string;
}

/** Writer → thread on the thread's channel, once attached. */
export interface ReadyMessage {
  ready: true;
}

const HELLO_RETRY_MS = 250;

/** One thread's link to the writer. */
export class WriterClient {
  private readonly channel: BroadcastChannel;
  private readonly name: string;
  private readonly waiting = new Map<number, (reply: CommitReply) => void>();
  private nextId = 1;
  private queue: CommitRequest[] = [];
  private flushQueued = false;
  private attached = false;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly instance: string) {
    this.name = `${channelNamePrefix(instance)}${threadId}:${Math.random().toString(36).slice(2)}`;
    this.channel = new BroadcastChannel(this.name);
    this.channel.onmessage = (event) => this.receive((event as MessageEvent).data);
    this.channel.unref();
    this.hello();
  }

  /** Requests waiting for their reply. */
  get outstanding(): number {
    return this.waiting.size;
  }

  private hello(): void {
    const hello = new BroadcastChannel(helloChannelName(this.instance));
    hello.postMessage({ channel: this.name } satisfies HelloMessage);
    hello.close();
    // A writer that was not listening yet hears the next one.
    this.retry = setTimeout(() => {
      if (!this.attached && !this.closed) this.hello();
    }, HELLO_RETRY_MS);
    this.retry.unref();
  }

  private receive(data: unknown): void {
    if (!this.attached) {
      if ((data as ReadyMessage).ready !== true) return;
      this.attached = true;
      if (this.retry) clearTimeout(this.retry);
      this.flush();
      return;
    }
    if (!Array.isArray(data)) return; // a repeated ready
    for (const reply of data as CommitReply[]) {
      const done = this.waiting.get(reply[0]);
      if (done) {
        this.waiting.delete(reply[0]);
        done(reply);
      }
    }
  }

  /** Sends one event's changes (`owner`: its event id); resolves with the writer's reply once durable (or refused). */
  commit(ops: CommitOp[], owner = 0): Promise<CommitReply> {
    if (this.closed) return Promise.reject(gsfError('GSF_ERR_SHUTTING_DOWN', 'object commit'));
    const id = this.nextId++;
    this.queue.push({ id, ops, owner });
    if (!this.flushQueued && this.attached) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.channel.postMessage(batch);
  }

  /** Closes the channel; commits still waiting get an error reply. */
  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.channel.close();
    for (const [id, done] of this.waiting) done([id, 2, 'the object store stopped', 0]);
    this.waiting.clear();
  }
}
