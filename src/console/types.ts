/**
 * The operations-console contract for managed plugins (SPEC 4.6): a handler object whose
 * implemented methods are exposed under `/cs-api/v1/`, the registration rules, and the typed
 * response writers each operation answers with.
 */
import type { EventContext } from '../events/types.ts';
import type { ApiStatusName } from '../api/writer.ts';

/** What every writer has: a failure answer and whether the request was answered. */
export interface WriterBase {
  /** Fails the request: `'NOT_FOUND'` → 404, `'INVALID_ARGUMENT'` → 400, … (see the status table). */
  fail(status: ApiStatusName | number, message?: string): void;
  readonly answered: boolean;
}
/** Answers with the status only (204). */
export interface VoidWriter extends WriterBase { ok(): void }
/** Answers `true` or `false`. */
export interface BoolWriter extends WriterBase { ok(value: boolean): void }
/** Answers a JSON object. */
export interface JsonObjectWriter extends WriterBase { ok(value: Record<string, unknown>): void }
/** Answers a JSON array. */
export interface JsonArrayWriter extends WriterBase { ok(value: readonly unknown[]): void }
/** Answers a JSON object or an array of them (custom queries). */
export interface JsonWriter extends WriterBase { ok(value: Record<string, unknown> | readonly Record<string, unknown>[]): void }
/** Answers a string. */
export interface StringWriter extends WriterBase { ok(value: string): void }
/** Answers an array of strings. */
export interface StringArrayWriter extends WriterBase { ok(value: readonly string[]): void }

/** Page info (SPEC 2.7): pages count from 0; a handler returns at most `page_size` entries of page `page_no`. */
export interface Page {
  page_no: number;
  page_size: number;
}

export interface GiftItem { item_id: string; quantity: number }
export interface NoticeMessage { language_code: string; message: string }
export interface ItemReclaim { item_id: string; expected_quantity: number; reclaimed: number }
export interface InventoryReclaim { type: string; id: string; items: ItemReclaim[] }

export interface Gift {
  target_type: 'account' | 'character';
  title: string;
  content: string;
  /** ISO-8601 date or date-time. */
  expires: string;
  items: GiftItem[];
}

type Op<R, W> = (req: R, res: W, ctx: EventContext) => void | Promise<void>;
type Id = { id: string };

/**
 * The console handler. Register an object implementing any of these methods with
 * `api.console.registerDeployApiHandler`; operations it does not implement answer 404
 * `GSF_ERR_NOT_IMPLEMENTED`. Each runs as an event named `cs-api.<Operation>`.
 */
export interface DeployApiHandler {
  getUserSearchConditions: Op<Record<string, never>, StringArrayWriter>;
  searchUsers: Op<{ condition: string; value: string } & Page, JsonObjectWriter>;
  getUser: Op<Id, JsonObjectWriter>;
  updateUser: Op<Id & { field: string; value: string }, VoidWriter>;
  isLoggedIn: Op<Id, BoolWriter>;
  forceLogout: Op<Id, VoidWriter>;
  getUserBanned: Op<Id, BoolWriter>;
  banUser: Op<Id, VoidWriter>;
  unbanUser: Op<Id, VoidWriter>;
  getCharacters: Op<Id, JsonArrayWriter>;
  getCharacter: Op<Id, JsonObjectWriter>;
  updateCharacter: Op<Id & { field: string; value: string }, VoidWriter>;
  getCharacterInventoryInfo: Op<Id, JsonArrayWriter>;
  getInventory: Op<{ type: string; id: string } & Page, JsonArrayWriter>;
  deleteInventoryItem: Op<{ type: string; id: string } & ItemReclaim, VoidWriter>;
  deleteMultipleInventoryItems: Op<{ inventories: InventoryReclaim[] }, VoidWriter>;
  giveGift: Op<Gift & { users: string[] }, VoidWriter>;
  giveGiftToAll: Op<Gift, VoidWriter>;
  refund: Op<{ receipt_id: string; purchase_log: Record<string, unknown> }, VoidWriter>;
  sendRealtimeNotice: Op<{ category: string; color: string; messages: NoticeMessage[] }, VoidWriter>;
  getCharacterPeriodicMissionStatus: Op<Id & { period: 'daily' | 'weekly' | 'monthly'; start_date: string } & Page, JsonArrayWriter>;
  getCharacterMissionStatus: Op<Id & {
    type: 'normal' | 'achievement'; category: string; condition: string; value: string; is_completed: boolean | null;
  } & Page, JsonArrayWriter>;
}

/** A campaign's begin or end callback: `campaign` is the JSON body the console sent (it has a string `campaign_id`). */
export type CampaignHandler = Op<{ type: string; campaign: Record<string, unknown> }, VoidWriter>;

/** A custom query's handler: `fields` are the query parameters (GET) or the JSON body (POST, PUT). */
export type CustomQueryHandler = Op<{ fields: Record<string, unknown> }, JsonWriter>;

/** `api.console`: the operations console's registration functions (SPEC 4.6). */
export interface ConsoleApi {
  /** Exposes the implemented methods of `handler` (one plugin per operation). */
  registerDeployApiHandler(handler: Partial<DeployApiHandler>): void;
  /** Account fields `PUT /cs-api/v1/account/{id}/{field}/{value}/` may change; others get 400. */
  setEditableFieldsForUser(fields: readonly string[]): void;
  /** Character fields `PUT /cs-api/v1/character/{id}/{field}/{value}/` may change. */
  setEditableFieldsForCharacter(fields: readonly string[]): void;
  /** Items a gift may hold, as `[item id, name]` pairs; a gift naming another item gets 400. */
  setGiftableItems(items: ReadonlyArray<readonly [string, string]>): void;
  /** Notice channels besides `all`. */
  setRealtimeNoticeCategory(categories: readonly string[]): void;
  /** Categories of normal and of achievement missions. */
  setMissionCategory(normal: readonly string[], achievement: readonly string[]): void;
  /** A campaign type, with the callbacks run when the console begins and ends a campaign of it. */
  registerCampaignType(type: string, begin: CampaignHandler, end: CampaignHandler): void;
  /**
   * A custom query at `METHOD /cs-api/v1/custom-queries/<uri>/`. Requests without every one of
   * `requestFields` get 400 and the handler is not called; `responseFields` null: each answer
   * logs a warning (the console cannot render columns it was not told about).
   */
  registerCustomQueryHandler(name: string, method: 'GET' | 'POST' | 'PUT', uri: string, requestFields: readonly string[],
    responseFields: readonly string[] | null, handler: CustomQueryHandler): void;
}
