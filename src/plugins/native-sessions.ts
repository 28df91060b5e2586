/**
 * Sessions and accounts of native plugins (ABI 1.2): the session and account records of a native
 * call's effects, carried out through the thread's session operations in order with its frames
 * (`native-calls.ts` calls these). An account call is answered by the account manager like a
 * managed `api.accounts` call; its continuation then runs in the same event. The session hooks
 * are registered by `native-session-hooks.ts`.
 */
import { native, EffectKind, type NativeCallOutcome } from '../native.ts';
import type { SessionOps } from '../session/ops.ts';
import { CloseCode } from '../session/protocol.ts';
import type { LoginResult } from '../session/types.ts';

/** `GSF_ACCOUNT_*` of gsf_plugin.h. */
export const AccountOp = { login: 0, logout: 1, locate: 2, ofSession: 3 } as const;
/** `GSF_LOGIN_*` of gsf_plugin.h. */
const LoginCode = { ok: 0, alreadyLoggedIn: 1, noSession: 2 } as const;

/** The answer of an account call, waiting to run its continuation. */
export class AccountAnswer {
  constructor(readonly op: number, readonly value: unknown) {}
}

/**
 * Carries out the session record at `effects[i]` (group, close, broadcast; an account request
 * when `account` is given, which gets every account call's answer with its continuation, 0 when
 * none is wanted) and returns the index after it, or -1 when the record is not one of these.
 */
export function applySessionEffect(effects: unknown[], i: number, ops: SessionOps,
  account?: (continuation: number, answer: Promise<AccountAnswer>) => void): number {
  switch (effects[i]) {
    case EffectKind.sessionGroup:
      ops.join(effects[i + 1] as number, effects[i + 2] as string, effects[i + 3] === 1);
      return i + 4;
    case EffectKind.sessionClose:
      ops.close(effects[i + 1] as number, CloseCode.closedByServer, effects[i + 2] as string);
      return i + 3;
    case EffectKind.broadcast:
      ops.broadcastFrames(effects[i + 1] as number[] | null, effects[i + 2] as string | null, effects[i + 3] as Uint8Array | null);
      return i + 4;
    case EffectKind.accountRequest: {
      if (account === undefined) throw new Error('native effects: an account request outside an event');
      const continuation = effects[i + 1] as number;
      const op = effects[i + 2] as number;
      account(continuation, requestAccount(ops, op, effects[i + 3] as string, effects[i + 4] as number));
      return i + 5;
    }
    default:
      return -1;
  }
}

function requestAccount(ops: SessionOps, op: number, account: string, sessionId: number): Promise<AccountAnswer> {
  let answer: Promise<unknown>;
  switch (op) {
    case AccountOp.login: answer = ops.account('login', [account, sessionId]); break;
    case AccountOp.logout: answer = ops.account('logout', [account]); break;
    case AccountOp.locate: answer = ops.account('locate', [account]); break;
    default: answer = ops.account('accountOf', [sessionId]); break;
  }
  return answer.then((value) => new AccountAnswer(op, value));
}

/** Runs an account continuation with its answer (the event's context cells are written). */
export function continueAccount(continuation: number, answer: AccountAnswer): NativeCallOutcome {
  const v = answer.value;
  switch (answer.op) {
    case AccountOp.login: {
      const r = v as LoginResult;
      if (r.ok) return native.pluginContinueAccount(continuation, LoginCode.ok, r.replaced ?? 0, null);
      if (r.reason === 'already_logged_in') return native.pluginContinueAccount(continuation, LoginCode.alreadyLoggedIn, r.sessionId, null);
      return native.pluginContinueAccount(continuation, LoginCode.noSession, 0, null);
    }
    case AccountOp.logout:
      return native.pluginContinueAccount(continuation, v === true ? 1 : 0, 0, null);
    case AccountOp.locate:
      return native.pluginContinueAccount(continuation, 0, typeof v === 'number' ? v : 0, null);
    default:
      return native.pluginContinueAccount(continuation, 0, 0, typeof v === 'string' ? v : null);
  }
}
