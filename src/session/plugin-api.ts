/** `api.sessions` and `api.accounts` of one plugin (see `src/session/types.ts`). */
import type { EventRuntime } from '../events/runtime.ts';
import { gsfError } from '../errors.ts';
import { hasLoneSurrogate } from '../text.ts';
import { checkGroup, checkHandledType, checkSessionId, checkType, encodeFailure } from './plugin-checks.ts';
import { messageEntry, sessionHandlers } from './worker/message-event.ts';
import { sessionOps } from './ops.ts';
import { CloseCode } from './protocol.ts';
import type { AccountApi, LoginResult, SessionApi } from './types.ts';

export function createSessionApi(plugin: string, rt: EventRuntime): SessionApi {
  const handlers = sessionHandlers(rt);
  const ops = sessionOps(rt);
  return {
    onMessage(type, handler) {
      checkHandledType('sessions.onMessage', type);
      if (type.startsWith('_')) throw gsfError('GSF_ERR_BAD_ARGUMENT', `sessions.onMessage: message types starting with '_' are reserved ('${type}')`);
      if (typeof handler !== 'function') throw gsfError('GSF_ERR_BAD_ARGUMENT', `sessions.onMessage('${type}'): handler must be a function`);
      const owner = handlers.messages.get(type);
      if (owner) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', plugin, 'message type', type, owner.plugin);
      handlers.messages.set(type, messageEntry(plugin, handler as never));
    },
    onOpen(handler) {
      if (typeof handler !== 'function') throw gsfError('GSF_ERR_BAD_ARGUMENT', 'sessions.onOpen: handler must be a function');
      handlers.opened.push({ plugin, fn: handler });
    },
    onClose(handler) {
      if (typeof handler !== 'function') throw gsfError('GSF_ERR_BAD_ARGUMENT', 'sessions.onClose: handler must be a function');
      handlers.closed.push({ plugin, fn: handler });
    },
    send(sessionId, type, body) {
      checkSessionId('sessions.send', sessionId);
      checkType('sessions.send', type);
      try {
        ops.sendTo(sessionId, type, body);
      } catch (err) {
        throw encodeFailure('sessions.send', err);
      }
    },
    broadcast(sessionIds, type, body) {
      checkType('sessions.broadcast', type);
      if (sessionIds !== 'all') {
        if (!Array.isArray(sessionIds)) throw gsfError('GSF_ERR_BAD_ARGUMENT', "sessions.broadcast: give an array of session ids or 'all'");
        for (const id of sessionIds) checkSessionId('sessions.broadcast', id);
        if (sessionIds.length === 0) return;
      }
      try {
        ops.broadcast(sessionIds === 'all' ? null : sessionIds, type, body);
      } catch (err) {
        throw encodeFailure('sessions.broadcast', err);
      }
    },
    join(sessionId, group) {
      checkSessionId('sessions.join', sessionId);
      checkGroup('sessions.join', group);
      ops.join(sessionId, group, true);
    },
    leave(sessionId, group) {
      checkSessionId('sessions.leave', sessionId);
      checkGroup('sessions.leave', group);
      ops.join(sessionId, group, false);
    },
    publish(group, type, body) {
      checkGroup('sessions.publish', group);
      checkType('sessions.publish', type);
      try {
        ops.publish(group, type, body);
      } catch (err) {
        throw encodeFailure('sessions.publish', err);
      }
    },
    close(sessionId, reason = '') {
      checkSessionId('sessions.close', sessionId);
      ops.close(sessionId, CloseCode.closedByServer, String(reason));
    },
  };
}

export function createAccountApi(rt: EventRuntime): AccountApi {
  const ops = sessionOps(rt);
  const account = (what: string, id: unknown): string => {
    if (typeof id !== 'string' || id === '') throw gsfError('GSF_ERR_BAD_ARGUMENT', `accounts.${what}: account id must be a non-empty string`);
    if (hasLoneSurrogate(id)) throw gsfError('GSF_ERR_BAD_ARGUMENT', `accounts.${what}: account id holds an unpaired UTF-16 surrogate (text with no UTF-8 form)`);
    return id;
  };
  return {
    login(accountId, sessionId) {
      const a = account('login', accountId);
      const sid = sessionId ?? rt.current()?.sessionId ?? undefined;
      checkSessionId('accounts.login (outside a session event, pass the session id)', sid);
      return ops.account('login', [a, sid]) as Promise<LoginResult>;
    },
    logout: (accountId) => ops.account('logout', [account('logout', accountId)]) as Promise<boolean>,
    locate: (accountId) => ops.account('locate', [account('locate', accountId)]) as Promise<number | null>,
    isLoggedIn: async (accountId) => (await ops.account('locate', [account('isLoggedIn', accountId)])) !== null,
    accountOf(sessionId) {
      checkSessionId('accounts.accountOf', sessionId);
      return ops.account('accountOf', [sessionId]) as Promise<string | null>;
    },
  };
}
