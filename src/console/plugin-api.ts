/** `api.console` of one managed plugin: its console registrations on this thread. */
import { gsfError } from '../errors.ts';
import type { EventRuntime } from '../events/runtime.ts';
import { OPERATIONS } from './operations.ts';
import { ConsoleRegistrar } from './registry.ts';
import type { ConsoleApi } from './types.ts';

type Method = (req: unknown, res: unknown, ctx: unknown) => unknown;

function checkFn(what: string, fn: unknown): asserts fn is Method {
  if (typeof fn !== 'function') throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what} must be a function`);
}

/** Creates `api.console` for `plugin`. */
export function createConsoleApi(plugin: string, rt: EventRuntime): ConsoleApi {
  let registrar: ConsoleRegistrar | null = null;
  const reg = (): ConsoleRegistrar => registrar ??= new ConsoleRegistrar(rt, 'managed', plugin);
  return {
    registerDeployApiHandler(handler) {
      if (typeof handler !== 'object' || handler === null) throw gsfError('GSF_ERR_BAD_ARGUMENT', 'registerDeployApiHandler: give an object with handler methods');
      let exposed = 0;
      for (const op of OPERATIONS) {
        const fn = (handler as Record<string, unknown>)[op.method];
        if (fn === undefined) continue;
        checkFn(`registerDeployApiHandler: ${op.method}`, fn);
        reg().operation(op.method, (args, res, ctx) => fn.call(handler, args, res, ctx));
        exposed++;
      }
      if (exposed === 0) throw gsfError('GSF_ERR_BAD_ARGUMENT', `registerDeployApiHandler: the object implements no operation (${OPERATIONS.map((o) => o.method).join(', ')})`);
    },
    setEditableFieldsForUser: (fields) => reg().editable('account', fields),
    setEditableFieldsForCharacter: (fields) => reg().editable('character', fields),
    setGiftableItems: (items) => reg().giftable(items),
    setRealtimeNoticeCategory: (categories) => reg().noticeCategories(categories),
    setMissionCategory: (normal, achievement) => reg().missionCategories(normal, achievement),
    registerCampaignType(type, begin, end) {
      checkFn(`registerCampaignType('${String(type)}'): begin`, begin);
      checkFn(`registerCampaignType('${String(type)}'): end`, end);
      reg().campaign(type, (args, res, ctx) => begin(args as never, res as never, ctx), (args, res, ctx) => end(args as never, res as never, ctx));
    },
    registerCustomQueryHandler(name, method, uri, requestFields, responseFields, handler) {
      checkFn(`registerCustomQueryHandler(${JSON.stringify(name)}): handler`, handler);
      reg().customQuery(name, method, uri, requestFields, responseFields, (args, res, ctx) => handler(args as never, res as never, ctx));
    },
  };
}
