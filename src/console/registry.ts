/**
 * What plugins registered for the operations console on one thread, for each side: managed
 * plugins (`api.console`) and native plugins (their C registrations, added by the native
 * loader). Every thread holds the same registrations; handlers are API targets
 * (`console:<side>:<Operation>`, `campaign:<side>:<type>:<begin|end>`, `query:<side>:<METHOD> <uri>`),
 * and the main thread's console feature serves one side (`deploy_api_service_use_managed`).
 */
import { gsfError } from '../errors.ts';
import type { EventRuntime } from '../events/runtime.ts';
import { apiTargets, type ApiTarget } from '../api/api-event.ts';
import { AnswerKind } from '../api/writer.ts';
import { parsePattern } from '../api/route-patterns.ts';
import { OPERATION_BY_METHOD, type RuleSet } from './operations.ts';

export type ConsoleSideName = 'managed' | 'native';

export interface CustomQuery {
  plugin: string;
  name: string;
  method: 'GET' | 'POST' | 'PUT';
  uri: string;
  path: string;
  requestFields: string[];
  responseFields: string[] | null;
  key: string;
}

/** The rules one plugin added to a side (the side's sets are their union, in plugin order). */
interface RulePart {
  editableUser: string[];
  editableCharacter: string[];
  giftable: Array<[string, string]>;
  noticeCategories: string[];
  missionNormal: string[];
  missionAchievement: string[];
}

export interface ConsoleSide extends RuleSet {
  name: ConsoleSideName;
  /** Implemented operations: operation name → plugin. */
  operations: Map<string, string>;
  campaigns: Map<string, { plugin: string; begin: string; end: string }>;
  queries: Map<string, CustomQuery>;
  /** Plugins that registered anything. */
  plugins: Set<string>;
  editableUser: Set<string>;
  editableCharacter: Set<string>;
  giftable: Map<string, string>;
  noticeCategories: Set<string>;
  missionNormal: Set<string>;
  missionAchievement: Set<string>;
  /** What each plugin added to the rule sets above, so a plugin reload can take its part back out. */
  parts: Map<string, RulePart>;
}

export interface ConsoleRegistry {
  managed: ConsoleSide;
  native: ConsoleSide;
}

function emptySide(name: ConsoleSideName): ConsoleSide {
  return {
    name, operations: new Map(), campaigns: new Map(), queries: new Map(), plugins: new Set(), editableUser: new Set(),
    editableCharacter: new Set(), giftable: new Map(), noticeCategories: new Set(), missionNormal: new Set(), missionAchievement: new Set(),
    parts: new Map(),
  };
}

const registries = new WeakMap<EventRuntime, ConsoleRegistry>();

/** The console registrations of a thread. */
export function consoleRegistry(rt: EventRuntime): ConsoleRegistry {
  let reg = registries.get(rt);
  if (!reg) registries.set(rt, reg = { managed: emptySide('managed'), native: emptySide('native') });
  return reg;
}

/** The API target key of an operation on a side. */
export function operationKey(side: ConsoleSideName, operation: string): string {
  return `console:${side}:${operation}`;
}

function names(what: string, list: unknown): string[] {
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'string' || v === '')) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what} must be an array of non-empty strings`);
  }
  return list as string[];
}

/** Registrations of one plugin into one side of a thread's console registry. */
export class ConsoleRegistrar {
  private readonly side: ConsoleSide;
  private readonly targets: Map<string, ApiTarget>;

  constructor(rt: EventRuntime, sideName: ConsoleSideName, private readonly plugin: string) {
    this.side = consoleRegistry(rt)[sideName];
    this.targets = apiTargets(rt);
  }

  private touch(): ConsoleSide {
    this.side.plugins.add(this.plugin);
    return this.side;
  }

  private part(): RulePart {
    let part = this.side.parts.get(this.plugin);
    if (part === undefined) {
      part = { editableUser: [], editableCharacter: [], giftable: [], noticeCategories: [], missionNormal: [], missionAchievement: [] };
      this.side.parts.set(this.plugin, part);
    }
    return part;
  }

  /** Exposes one operation (by its managed method name) with the handler `run`. */
  operation(method: string, run: ApiTarget['run']): void {
    const op = OPERATION_BY_METHOD.get(method);
    if (!op) throw gsfError('GSF_ERR_BAD_ARGUMENT', `console handler method '${method}' is not an operation`);
    const side = this.touch();
    const owner = side.operations.get(op.name);
    if (owner !== undefined) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', this.plugin, 'console operation', op.name, owner);
    side.operations.set(op.name, this.plugin);
    this.targets.set(operationKey(side.name, op.name), { plugin: this.plugin, kind: op.answer, stage: 'console handler', run });
  }

  editable(which: 'account' | 'character', fields: unknown): void {
    const side = this.touch();
    const key = which === 'account' ? 'editableUser' : 'editableCharacter';
    for (const f of names(`setEditableFieldsFor${which === 'account' ? 'User' : 'Character'}: fields`, fields)) {
      side[key].add(f);
      this.part()[key].push(f);
    }
  }

  giftable(items: unknown): void {
    if (!Array.isArray(items) || items.some((i) => !Array.isArray(i) || i.length !== 2 || typeof i[0] !== 'string' || i[0] === '' || typeof i[1] !== 'string')) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', 'setGiftableItems: items must be an array of [item id, name] pairs');
    }
    const side = this.touch();
    for (const [item, name] of items as Array<[string, string]>) {
      side.giftable.set(item, name);
      this.part().giftable.push([item, name]);
    }
  }

  noticeCategories(categories: unknown): void {
    const side = this.touch();
    for (const c of names('setRealtimeNoticeCategory: categories', categories)) {
      side.noticeCategories.add(c);
      this.part().noticeCategories.push(c);
    }
  }

  missionCategories(normal: unknown, achievement: unknown): void {
    const side = this.touch();
    const normals = names('setMissionCategory: normal categories', normal);
    const achievements = names('setMissionCategory: achievement categories', achievement);
    for (const c of normals) side.missionNormal.add(c);
    for (const c of achievements) side.missionAchievement.add(c);
    this.part().missionNormal.push(...normals);
    this.part().missionAchievement.push(...achievements);
  }

  campaign(type: unknown, begin: ApiTarget['run'], end: ApiTarget['run']): void {
    if (typeof type !== 'string' || !/^[A-Za-z0-9._-]+$/.test(type)) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `registerCampaignType: type must be letters, digits, '.', '_' or '-', got ${JSON.stringify(type)}`);
    }
    const side = this.touch();
    const owner = side.campaigns.get(type);
    if (owner) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', this.plugin, 'campaign type', type, owner.plugin);
    const key = `campaign:${side.name}:${type}`;
    side.campaigns.set(type, { plugin: this.plugin, begin: `${key}:begin`, end: `${key}:end` });
    this.targets.set(`${key}:begin`, { plugin: this.plugin, kind: AnswerKind.void, stage: 'campaign begin callback', run: begin });
    this.targets.set(`${key}:end`, { plugin: this.plugin, kind: AnswerKind.void, stage: 'campaign end callback', run: end });
  }

  customQuery(name: unknown, method: unknown, uri: unknown, requestFields: unknown, responseFields: unknown, run: ApiTarget['run']): void {
    const what = `registerCustomQueryHandler(${JSON.stringify(name)})`;
    if (typeof name !== 'string' || name === '') throw gsfError('GSF_ERR_BAD_ARGUMENT', 'registerCustomQueryHandler: name must be a non-empty string');
    if (method !== 'GET' && method !== 'POST' && method !== 'PUT') throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: method must be GET, POST or PUT`);
    if (typeof uri !== 'string' || uri.includes('{')) throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: uri must be a plain path without parameters`);
    const segments = parsePattern(uri.startsWith('/') ? uri : `/${uri}`, what);
    const request = names(`${what}: request fields`, requestFields ?? []);
    const response = responseFields === null || responseFields === undefined ? null : names(`${what}: response fields`, responseFields);
    const side = this.touch();
    const path = `/cs-api/v1/custom-queries/${segments.join('/')}`;
    const key = `query:${side.name}:${method} ${path}`;
    const owner = side.queries.get(key);
    if (owner) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', this.plugin, 'custom query', `${method} ${path}`, owner.plugin);
    side.queries.set(key, { plugin: this.plugin, name, method, uri: segments.join('/'), path, requestFields: request, responseFields: response, key });
    this.targets.set(key, { plugin: this.plugin, kind: AnswerKind.json, stage: 'custom query handler', run });
  }
}
