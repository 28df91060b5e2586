/**
 * Sessions as a built-in feature: the maintenance state and its REST group (always), and,
 * when the manifest lists `SessionService`, the WebSocket listener, the account manager, the
 * outbound path from event workers, and closing sessions after event timeouts.
 */
import { native } from '../../native.ts';
import { ManifestError } from '../../config/manifest.ts';
import { registerMaintenanceRoutes } from '../../maintenance/routes.ts';
import type { Feature } from '../../features.ts';
import type { TimeoutHandler } from '../../events/types.ts';
import { AccountManager, type LoginPolicy } from './accounts.ts';
import { serveAccountCalls, type AccountOp } from '../account-calls.ts';
import { encodeFrame } from '../codec.ts';
import { manifestMaintenanceRecord, Maintenance, type MaintenanceState } from '../../maintenance/state.ts';
import { noAccounts, setMainSessionTarget } from './ops.ts';
import { OutboundReader } from './outbound-reader.ts';
import { requeueCancelledClosed } from '../push-stage.ts';
import { answerUnansweredMessages, stopAnsweringMessages } from './unanswered.ts';
import { setOutboundListening } from '../worker/outbound-writer.ts';
import { CloseCode, EngineType, type CodecName, type MaintenanceNotice } from '../protocol.ts';
import { SessionListener } from '../listener.ts';
import { IoSessions, maxIoThreads } from './io-sessions.ts';
import type { LocalSessions } from './local-sessions.ts';
import { sessionHandlers } from '../worker/message-event.ts';
import { onPluginSwap } from '../../hooks/reload-hooks.ts';
import { clusterSessionJoin } from '../../hooks/cluster-hooks.ts';

/** Runs one account operation on the main thread. */
function accountOp(accounts: AccountManager, op: AccountOp, args: unknown[]): unknown {
  switch (op) {
    case 'login': return accounts.login(args[0] as string, args[1] as number);
    case 'logout': return accounts.logout(args[0] as string);
    case 'logoutSession': return accounts.logoutSession(args[0] as number);
    case 'locate': return accounts.locate(args[0] as string);
    case 'accountOf': return accounts.accountOf(args[0] as number);
  }
}

function notice(state: MaintenanceState): MaintenanceNotice {
  return { under_maintenance: state.under_maintenance, date_start: state.date_start, date_end: state.date_end, messages: state.messages };
}

/** The running session service of this process (tests and embedders), or null. */
export let activeSessions: { listener: LocalSessions; accounts: AccountManager; maintenance: Maintenance; reader: OutboundReader } | null = null;

export const sessionFeature: Feature = {
  name: 'sessions',
  async start({ manifest, thread, dispatcher, api }) {
    const m = manifest.components.Maintenance!;
    const record = manifestMaintenanceRecord(manifest);
    const maintenance = new Maintenance(record, m.under_maintenance as boolean, m.follow_schedule as boolean);
    registerMaintenanceRoutes(api.router, maintenance);
    native.counterUpdate('engine', 'sessions', 0, false, 'Connected client sessions');
    native.counterUpdate('engine', 'concurrent_user', 0, false, 'Accounts logged in');
    if (!manifest.listed.has('SessionService')) {
      maintenance.start(m.under_maintenance as boolean);
      // Event threads' account calls are answered at once: there is no account manager to wait for.
      dispatcher.onChannel('accounts', (hello) => serveAccountCalls(hello.port, (op) => { throw noAccounts(op); }));
      return {
        stop: () => {
          dispatcher.onChannel('accounts', null);
          maintenance.stop();
        },
      };
    }

    const args = manifest.components.SessionService!;
    const idle = args.idle_timeout_in_sec as number;
    if (idle > 0 && idle < 8) {
      throw new ManifestError(`${manifest.file}: SessionService.idle_timeout_in_sec must be 0 (off) or at least 8, got ${idle}`);
    }
    const ioThreads = args.io_threads_size as number;
    if (ioThreads > maxIoThreads()) {
      throw new ManifestError(`${manifest.file}: SessionService.io_threads_size must be at most ${maxIoThreads()} (the cores here), got ${ioThreads}`);
    }
    const options = {
      address: args.websocket_address as string,
      port: args.websocket_port as number,
      maxMessageBytes: args.max_message_bytes as number,
      maxBackpressureBytes: args.max_backpressure_bytes as number,
      idleTimeoutSec: args.idle_timeout_in_sec as number,
      sendPings: args.send_pings_automatically as boolean,
    };
    const handlers = sessionHandlers(thread.runtime);
    const io = ioThreads > 1 ? new IoSessions(thread, handlers, options, ioThreads) : null;
    const listener: LocalSessions = io ?? new SessionListener(thread, handlers, options);
    const accounts = new AccountManager(args.account_login_policy as LoginPolicy, {
      sessionExists: (id) => listener.has(id),
      closeSession: (id, code, reason) => { listener.end(id, code, reason); },
    });
    listener.onSessionClosed = (id) => accounts.logoutSession(id);
    // With the Cluster component: sessions and logins of other servers, before any client connects.
    const cluster = clusterSessionJoin();
    cluster?.attach(listener, accounts, args.account_login_policy as string);

    const applyMaintenance = (state: MaintenanceState, previous: MaintenanceState | null): void => {
      if (state.under_maintenance) {
        const body = notice(state);
        const gate = (codec: CodecName): string | Uint8Array => encodeFrame(codec, EngineType.maintenance, body);
        listener.setMaintenance(gate, gate);
        thread.log.info(`maintenance on: ${state.date_start} to ${state.date_end}: ${state.messages}`);
      } else {
        if (previous?.under_maintenance) {
          const body = notice(state);
          listener.setMaintenance(null, (codec) => encodeFrame(codec, EngineType.maintenanceEnd, body));
          thread.log.info('maintenance off');
        } else {
          listener.setMaintenance(null, null);
        }
      }
    };
    maintenance.onChange(applyMaintenance);
    applyMaintenance(maintenance.snapshot(), null);

    const reader = new OutboundReader(listener);
    dispatcher.onChannel('session-out', (hello) => reader.accept(hello));
    const removeEndHooks = dispatcher.addEndHooks(reader);
    const accountPorts = new Set<{ close(): void }>();
    dispatcher.onChannel('accounts', (hello) => {
      accountPorts.add(hello.port);
      // Closed when the worker's thread ends (a reload or resize): let go of it.
      hello.port.once('close', () => accountPorts.delete(hello.port));
      serveAccountCalls(hello.port, (op, a) => accountOp(accounts, op, a));
    });
    setMainSessionTarget({
      send: (id, frame) => { listener.send(id, frame); },
      broadcast: (ids, json, msgpack) => listener.broadcast(ids, json, msgpack),
      close: (id, code, reason) => listener.close(id, code, reason),
      group: (id, group, join) => listener.group(id, group, join),
      publish: (group, json, msgpack) => listener.publish(group, json, msgpack),
      account: (op, a) => accountOp(accounts, op, a),
    });

    const closeOnTimeout = args.close_session_when_event_timeout as boolean;
    const timeoutEntry: { plugin: string; fn: TimeoutHandler } = {
      plugin: 'gsf',
      fn: (_name, _id, _tag, session) => {
        if (closeOnTimeout && session !== null) listener.end(session, CloseCode.eventTimeout, 'an event of this session timed out');
      },
    };
    // Appended last: plugins' timeout handlers run first, then the session closes (SPEC 6.3).
    thread.declarations.timeoutHandlers.push(timeoutEntry);

    // A plugin reload changes which message types are served, at its switch.
    const unhookReload = onPluginSwap(() => listener.typesChanged());
    // A client message whose event will never finish is answered with an error frame
    // (unanswered.ts). A closed event cancelled with its tag's queued events (an event of the
    // session timed out) is queued again: the session's closed hooks run once, as when it
    // closes after the timeout.
    answerUnansweredMessages(closeOnTimeout);
    const unlistenGone = dispatcher.onEventsGone((events, why) => {
      if (why !== 'was cancelled') return;
      const again = requeueCancelledClosed(events.map((e) => e.id));
      if (again > 0) thread.log.vlog(1, `queued again the closed event of ${again} session(s), cancelled with a timed-out event of their tag`);
    });
    if (io !== null) await io.listen(manifest);
    else await (listener as SessionListener).listen();
    try {
      await cluster?.listening(args.websocket_address as string, listener.port);
    } catch (err) {
      // Not started, so never stopped: its sockets and I/O threads end here (a thread running
      // uWebSockets.js must end by itself before the process exits).
      unhookReload();
      unlistenGone();
      stopAnsweringMessages();
      await listener.shutdown();
      throw err;
    }
    setOutboundListening(true);
    maintenance.start(m.under_maintenance as boolean);
    activeSessions = { listener, accounts, maintenance, reader };
    return {
      listening: { websocket: `${args.websocket_address as string}:${listener.port}` },
      async stop() {
        unhookReload();
        unlistenGone();
        stopAnsweringMessages();
        setOutboundListening(false);
        maintenance.stop();
        await listener.shutdown();
        accounts.forgetSessions();
        reader.stop();
        dispatcher.onChannel('session-out', null);
        dispatcher.onChannel('accounts', null);
        removeEndHooks();
        for (const p of accountPorts) p.close();
        setMainSessionTarget(null);
        const list = thread.declarations.timeoutHandlers;
        if (list.includes(timeoutEntry)) list.splice(list.indexOf(timeoutEntry), 1);
        activeSessions = null;
      },
    };
  },
};
