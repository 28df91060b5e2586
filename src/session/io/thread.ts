/**
 * A session I/O thread (`SessionService.io_threads_size` > 1): a uWebSockets.js app of its own on
 * the shared WebSocket port. It owns the sessions it accepts: it checks and peeks at their
 * messages and queues them as network events itself, and writes the frames the main thread
 * routes to it (`io-batch.ts`). Accounts, groups, the cluster and the closed events stay on the
 * main thread (`../main/io-sessions.ts`), which hears of every open and close first.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { native } from '../../native.ts';
import { buildFlags } from '../../config/flag-setup.ts';
import type { ArgValue } from '../../config/manifest.ts';
import { createLogger } from '../../log/logger.ts';
import { randomTag } from '../../events/tags.ts';
import { SessionListener } from '../listener.ts';
import { applyIoBatch } from './io-batch.ts';
import { ioSessionId } from './io-ids.ts';
import { statsRow } from './io-stats.ts';
import { IoControl, type HandledTypes, type IoCommand, type IoInit, type IoNote } from './io-messages.ts';

const init = workerData as IoInit;
const control = new Int32Array(init.control);
const notes = init.notes;
const note = (m: IoNote): void => notes.postMessage(m);

const flags = buildFlags(init.components);
let configVersion = -1;
// A local copy: module exports are getters under the CommonJS transform (read per message).
const core = native;
function refresh(): void {
  const version = core.configVersion();
  if (version === configVersion) return;
  configVersion = version;
  flags.load(JSON.parse(core.configGet()) as Record<string, ArgValue>);
}
refresh();
const log = createLogger(flags, { file: init.logFile, format: init.logFormat, thread: `io-${init.index}` });

const handlers = { messages: new Set<string>(), opened: { length: 0 }, closed: { length: 0 } };
function setHandled(h: HandledTypes): void {
  handlers.messages = new Set(h.messages);
  handlers.opened = { length: h.opened };
  handlers.closed = { length: h.closed };
}
setHandled(init.handled);

const listener = new SessionListener({ flags, log }, handlers, init.options, {
  sessionId: (codec) => ioSessionId(randomTag(), init.index, codec),
  opened: (id) => note({ kind: 'opened', id }),
  closed: (id, code, reason) => note({ kind: 'closed', id, code, reason }),
  refresh,
  stats: statsRow(init.stats, init.index),
});

if (init.maintenance !== null) {
  const frames = init.maintenance;
  listener.maintenanceFrame = (codec) => frames[codec];
}

parentPort!.on('message', (m: IoCommand) => {
  try {
    command(m);
  } catch (err) {
    // A thread that dies takes its sessions with it: one bad command is logged instead.
    log.error(`session I/O thread ${init.index}: ${m.kind} failed: ${(err as Error).stack ?? String(err)}`);
  }
});

function command(m: IoCommand): void {
  // Flags read live (message logging, log levels) hold for what the main thread has this thread
  // write (routed frames, maintenance notices, closes), not only from its next client message on.
  refresh();
  switch (m.kind) {
    case 'batch':
      try {
        applyIoBatch(m.buffer, listener);
      } finally {
        // Free for the next batch; if the main thread held one back meanwhile, ask for it.
        Atomics.store(control, IoControl.busy, 0);
        if (Atomics.exchange(control, IoControl.held, 0) === 1) note({ kind: 'drained' });
      }
      return;
    case 'types':
      setHandled(m.handled);
      listener.typesChanged();
      return;
    case 'maintenance': {
      const frames = { json: m.json, msgpack: m.msgpack };
      const announce = m.announce;
      listener.setMaintenance((codec) => frames[codec], announce === null ? null : (codec) => announce[codec]);
      return;
    }
    case 'maintenance-off': {
      const announce = m.announce;
      listener.setMaintenance(null, announce === null ? null : (codec) => announce[codec]);
      return;
    }
    case 'shutdown':
      listener.shutdown();
      // Every close above has been noted: the main thread queues their closed events. With its
      // sockets closed and its ports let go, the thread ends by itself (terminating a thread
      // that runs uWebSockets.js can crash the process).
      note({ kind: 'stopped' });
      notes.close();
      parentPort!.close();
      return;
  }
}

listener.listen(init.listenPort).then(
  (port) => note({ kind: 'listening', port }),
  (err: Error) => note({ kind: 'failed', message: err.message }),
);
