/**
 * The session hooks of native plugins (ABI 1.2) on one thread: each runs as a managed plugin's
 * onOpen / onClose handler does (in the same list, in plugin order), as the engine event of the
 * session's tag.
 */
import { native } from '../native.ts';
import type { EventRuntime, RunningEvent } from '../events/runtime.ts';
import type { SessionOps } from '../session/ops.ts';
import type { SessionClosedInfo, SessionOpenedInfo } from '../session/types.ts';
import type { PluginApi } from './types.ts';
import { contextCells, countCachedReads, settleNativeCall } from './native-calls.ts';

/** Registers a native copy's session hooks on this thread, with the managed ones. */
export function registerNativeSessionHooks(api: PluginApi, rt: EventRuntime, plugin: string, path: string, ops: SessionOps): void {
  for (const [hook, closed] of native.pluginSessionHooks(path)) {
    if (closed) {
      api.sessions.onClose((info: SessionClosedInfo, ctx) => {
        const ev = ctx as RunningEvent;
        contextCells(ev);
        const r = native.pluginCallSession(hook, info.code, info.reason, info.account, null);
        countCachedReads(ev);
        return settleNativeCall(r, { rt, ev, ops, log: rt.log, plugin, what: 'session-closed hook', name: `session ${info.sessionId}` });
      });
    } else {
      api.sessions.onOpen((info: SessionOpenedInfo, ctx) => {
        const ev = ctx as RunningEvent;
        contextCells(ev);
        const r = native.pluginCallSession(hook, 0, info.version, info.codec, info.address);
        countCachedReads(ev);
        return settleNativeCall(r, { rt, ev, ops, log: rt.log, plugin, what: 'session-opened hook', name: `session ${info.sessionId}` });
      });
    }
  }
}

