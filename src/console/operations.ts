/**
 * The operations of the console handler (SPEC 4.6): their HTTP routes, the writer each answers
 * with, whose tag they run on, and how their arguments are read from the request (on the main
 * thread, where the registration rules gate them before any handler runs).
 *
 * `native` is the operation's place in `gsf_type_console_handlers` (gsf_plugin.h), 1-based.
 */
import { queryParam, type ApiRequest } from '../api/main/router.ts';
import { AnswerKind } from '../api/writer.ts';
import { shown } from '../text.ts';
import type { DeployApiHandler } from './types.ts';
import { bad, bodyObject, dateQuery, Fields, oneOfQuery, pageOf, requiredQuery } from './requests.ts';

/** The rules an operation's request is checked against (the serving side's registrations). */
export interface RuleSet {
  editableUser: ReadonlySet<string>;
  editableCharacter: ReadonlySet<string>;
  /** Item id → name. */
  giftable: ReadonlyMap<string, string>;
  noticeCategories: ReadonlySet<string>;
  missionNormal: ReadonlySet<string>;
  missionAchievement: ReadonlySet<string>;
}

export interface ArgsContext {
  rules: RuleSet;
  maxPageSize: number;
  /** An error line (gates that SPEC says are logged). */
  logError(line: string): void;
}

export interface ConsoleOperation {
  name: string;
  method: keyof DeployApiHandler;
  native: number;
  http: 'GET' | 'POST' | 'PUT';
  paths: readonly string[];
  answer: number;
  tag: 'account' | 'character' | 'random';
  args(req: ApiRequest, ctx: ArgsContext): Record<string, unknown>;
}

/** The notice channel every server has; `SetRealtimeNoticeCategory` adds others. */
export const DEFAULT_NOTICE_CATEGORY = 'all';
const V1 = '/cs-api/v1';
const id = (req: ApiRequest): Record<string, unknown> => ({ id: req.params.id });

function editable(which: 'account' | 'character', fields: ReadonlySet<string>, req: ApiRequest): Record<string, unknown> {
  const field = req.params.field!;
  if (!fields.has(field)) {
    const known = [...fields].sort();
    throw bad(known.length === 0
      ? `no ${which} field is editable (the console handlers declare none)`
      : `${which} field '${field}' is not editable (editable: ${known.join(', ')})`);
  }
  return { id: req.params.id, field, value: req.params.value };
}

/**
 * Most of one item a gift may name: a game adds it to a count, and a count past 2^53 is no
 * longer exact (a managed plugin's object store refuses it), so no gift may come near.
 */
export const MAX_GIFT_QUANTITY = 1_000_000_000;

function gift(req: ApiRequest, ctx: ArgsContext, withUsers: boolean): Record<string, unknown> {
  const f = new Fields(bodyObject(req));
  const items = f.objects('items', (i) => ({ item_id: i.nonEmpty('item_id'), quantity: i.integer('quantity', 1, MAX_GIFT_QUANTITY) }));
  const out: Record<string, unknown> = {
    target_type: f.oneOf('target_type', ['account', 'character']), title: f.string('title'), content: f.string('content'),
    expires: f.dateTime('expires'), items,
  };
  if (withUsers) out.users = f.strings('users');
  const refused = [...new Set(items.map((i) => i.item_id).filter((item) => !ctx.rules.giftable.has(item)))];
  if (refused.length > 0) {
    const known = [...ctx.rules.giftable.keys()].sort();
    const message = `items not designated giftable: ${refused.join(', ')} (giftable: ${known.length > 0 ? known.join(', ') : 'none'})`;
    ctx.logError(`GSF_ERR_BAD_REQUEST: ${req.method} ${req.path}: ${message}; the gift handler was not called`);
    throw bad(message);
  }
  return out;
}

function reclaim(f: Fields): { item_id: string; expected_quantity: number; reclaimed: number } {
  return { item_id: f.nonEmpty('item_id'), expected_quantity: f.integer('expected_quantity', 0), reclaimed: f.integer('reclaimed', 1) };
}

function category(req: ApiRequest, allowed: ReadonlySet<string>, what: string): string {
  const c = requiredQuery(req, 'category');
  if (!allowed.has(c)) throw bad(`${what} category '${c}' is not declared (declared: ${[...allowed].sort().join(', ') || 'none'})`);
  return c;
}

/** Every operation of the console handler, in the order of the native table. */
export const OPERATIONS: readonly ConsoleOperation[] = [
  { name: 'GetUserSearchConditions', method: 'getUserSearchConditions', native: 1, http: 'GET', answer: AnswerKind.stringArray, tag: 'random',
    paths: [`${V1}/search-conditions`, `${V1}/account/search-condition`], args: () => ({}) },
  { name: 'SearchUsers', method: 'searchUsers', native: 2, http: 'GET', answer: AnswerKind.jsonObject, tag: 'random',
    paths: [`${V1}/account/search`],
    args: (req, ctx) => ({ condition: requiredQuery(req, 'condition'), value: requiredQuery(req, 'value'), ...pageOf(req, ctx.maxPageSize) }) },
  { name: 'GetUser', method: 'getUser', native: 3, http: 'GET', answer: AnswerKind.jsonObject, tag: 'account', paths: [`${V1}/account/{id}`], args: id },
  { name: 'UpdateUser', method: 'updateUser', native: 4, http: 'PUT', answer: AnswerKind.void, tag: 'account',
    paths: [`${V1}/account/{id}/{field}/{value}`], args: (req, ctx) => editable('account', ctx.rules.editableUser, req) },
  { name: 'IsLoggedIn', method: 'isLoggedIn', native: 5, http: 'GET', answer: AnswerKind.bool, tag: 'account', paths: [`${V1}/account/{id}/connection`], args: id },
  { name: 'ForceLogout', method: 'forceLogout', native: 6, http: 'POST', answer: AnswerKind.void, tag: 'account', paths: [`${V1}/account/{id}/logout`], args: id },
  { name: 'GetUserBanned', method: 'getUserBanned', native: 7, http: 'GET', answer: AnswerKind.bool, tag: 'account', paths: [`${V1}/account/{id}/ban`], args: id },
  { name: 'BanUser', method: 'banUser', native: 8, http: 'POST', answer: AnswerKind.void, tag: 'account', paths: [`${V1}/account/{id}/ban`], args: id },
  { name: 'UnbanUser', method: 'unbanUser', native: 9, http: 'POST', answer: AnswerKind.void, tag: 'account', paths: [`${V1}/account/{id}/reinstate`], args: id },
  { name: 'GetCharacters', method: 'getCharacters', native: 10, http: 'GET', answer: AnswerKind.jsonArray, tag: 'account',
    paths: [`${V1}/account/{id}/character`], args: id },
  { name: 'GetCharacter', method: 'getCharacter', native: 11, http: 'GET', answer: AnswerKind.jsonObject, tag: 'character', paths: [`${V1}/character/{id}`], args: id },
  { name: 'UpdateCharacter', method: 'updateCharacter', native: 12, http: 'PUT', answer: AnswerKind.void, tag: 'character',
    paths: [`${V1}/character/{id}/{field}/{value}`], args: (req, ctx) => editable('character', ctx.rules.editableCharacter, req) },
  { name: 'GetCharacterInventoryInfo', method: 'getCharacterInventoryInfo', native: 13, http: 'GET', answer: AnswerKind.jsonArray, tag: 'character',
    paths: [`${V1}/character/{id}/inventory`], args: id },
  { name: 'GetInventory', method: 'getInventory', native: 14, http: 'GET', answer: AnswerKind.jsonArray, tag: 'random',
    paths: [`${V1}/characer/{type}/{id}`, `${V1}/character/{type}/{id}`],
    args: (req, ctx) => ({ type: req.params.type, id: req.params.id, ...pageOf(req, ctx.maxPageSize) }) },
  { name: 'DeleteInventoryItem', method: 'deleteInventoryItem', native: 15, http: 'POST', answer: AnswerKind.void, tag: 'random',
    paths: [`${V1}/inventory/{type}/{id}/item/{item_id}`],
    args: (req) => {
      const f = new Fields(bodyObject(req));
      return { type: req.params.type, id: req.params.id, item_id: req.params.item_id, expected_quantity: f.integer('expected_quantity', 0), reclaimed: f.integer('reclaimed', 1) };
    } },
  { name: 'DeleteMultipleInventoryItems', method: 'deleteMultipleInventoryItems', native: 16, http: 'POST', answer: AnswerKind.void, tag: 'random',
    paths: [`${V1}/inventory`],
    args: (req) => ({
      inventories: new Fields(bodyObject(req)).objects('inventories', (inv) => ({ type: inv.nonEmpty('type'), id: inv.nonEmpty('id'), items: inv.objects('items', reclaim) })),
    }) },
  { name: 'GiveGift', method: 'giveGift', native: 17, http: 'POST', answer: AnswerKind.void, tag: 'random', paths: [`${V1}/item/gift`],
    args: (req, ctx) => gift(req, ctx, true) },
  { name: 'GiveGiftToAll', method: 'giveGiftToAll', native: 18, http: 'POST', answer: AnswerKind.void, tag: 'random', paths: [`${V1}/item/gift-to-all`],
    args: (req, ctx) => gift(req, ctx, false) },
  { name: 'Refund', method: 'refund', native: 19, http: 'POST', answer: AnswerKind.void, tag: 'random', paths: [`${V1}/refund/{receipt_id}`],
    args: (req) => ({ receipt_id: req.params.receipt_id, purchase_log: bodyObject(req) }) },
  { name: 'SendRealtimeNotice', method: 'sendRealtimeNotice', native: 20, http: 'POST', answer: AnswerKind.void, tag: 'random', paths: [`${V1}/notice`],
    args: (req, ctx) => {
      const f = new Fields(bodyObject(req));
      const c = f.nonEmpty('category');
      if (c !== DEFAULT_NOTICE_CATEGORY && !ctx.rules.noticeCategories.has(c)) {
        throw bad(`notice category '${shown(c)}' is not declared (declared: ${[DEFAULT_NOTICE_CATEGORY, ...[...ctx.rules.noticeCategories].sort()].join(', ')})`);
      }
      const color = f.string('color');
      if (!/^#[0-9A-Fa-f]{6}$/.test(color)) throw bad(`'color' must be an RGB color #RRGGBB (got '${shown(color)}')`);
      return { category: c, color, messages: f.objects('messages', (m) => ({ language_code: m.nonEmpty('language_code'), message: m.string('message') })) };
    } },
  { name: 'GetCharacterPeriodicMissionStatus', method: 'getCharacterPeriodicMissionStatus', native: 21, http: 'GET', answer: AnswerKind.jsonArray,
    tag: 'character', paths: [`${V1}/character/{id}/mission/periodic`],
    args: (req, ctx) => ({
      id: req.params.id, period: oneOfQuery(req, 'period', ['daily', 'weekly', 'monthly']), start_date: dateQuery(req, 'start_date'), ...pageOf(req, ctx.maxPageSize),
    }) },
  { name: 'GetCharacterMissionStatus', method: 'getCharacterMissionStatus', native: 22, http: 'GET', answer: AnswerKind.jsonArray,
    tag: 'character', paths: [`${V1}/character/{id}/mission`],
    args: (req, ctx) => {
      const type = oneOfQuery(req, 'type', ['normal', 'achievement'])!;
      const completed = oneOfQuery(req, 'is_completed', ['true', 'false'], true);
      return {
        id: req.params.id, type, category: category(req, type === 'normal' ? ctx.rules.missionNormal : ctx.rules.missionAchievement, type),
        condition: queryParam(req, 'condition') ?? '', value: queryParam(req, 'value') ?? '',
        is_completed: completed === null ? null : completed === 'true', ...pageOf(req, ctx.maxPageSize),
      };
    } },
];

/** The operation a managed handler method or native table entry is, by method name. */
export const OPERATION_BY_METHOD: ReadonlyMap<string, ConsoleOperation> = new Map(OPERATIONS.map((o) => [o.method, o]));
