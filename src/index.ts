/**
 * gsf public API for plugin authors and embedders. Everything not exported here is internal.
 */

// Writing plugins: `export default definePlugin({ name, version, register(api) { ... } })`.
export type {
  PluginDefinition, PluginApi, TimerApi, TimerOptions, CounterApi, FlagApi, FlagSpec, TagApi,
} from './plugins/types.ts';
import { loadModule } from './load-module.ts';
import type { PluginDefinition } from './plugins/types.ts';
import type { GsfServer, StartOptions } from './server.ts';

/** Declares a plugin with full type checking of its definition. */
export function definePlugin(definition: PluginDefinition): PluginDefinition {
  return definition;
}

// What handlers receive and how events are queued.
export type { EventContext, EventHandler, EventKindName, InvokeOptions, TimeoutHandler } from './events/types.ts';

// Reserved tags: all timers share TIMER_TAG; NULL_TAG is what events get when random tags are off.
export { NULL_TAG, TIMER_TAG } from './native.ts';

// Running a server from code (tests, embedding); `gsf start` does the same from the CLI.
// server.ts, the main thread's whole module graph (listeners, database drivers, the cluster),
// loads on the first call: plugins import this module on every event thread, where none of it runs.
export type { GsfServer, StartOptions } from './server.ts';
export async function startServer(options?: StartOptions): Promise<GsfServer> {
  const server = await loadModule<typeof import('./server.ts')>(import.meta.url, './server.ts');
  return server.startServer(options);
}

// Authentication (`api.auth`): request and response records, and the per-platform key functions
// that turn what a game client sent into a request's authentication key (SPEC 2.2).
export type { AuthApi } from './auth/client/plugin-api.ts';
export type {
  AuthenticationRequest, AuthenticationResponse, PersonalInfoRequest, PersonalInfoResponse, PlayerAccount,
  PlatformType, AuthCallbackPayload, AgentAnswer,
} from './auth/types.ts';
export { AuthResult } from './auth/types.ts';
export {
  authenticationRequest, makeTestAuthenticationKey, makeIpAddressAuthenticationKey, makeSocialnetAuthenticationKey,
  makeMicroblogAuthenticationKey,
} from './auth/client/keys.ts';

// Client sessions (`api.sessions`) and accounts (`api.accounts`); the wire protocol's codes.
// The client SDK is its own entry point: `import { GsfClient } from 'gsf/sdk'`.
export type {
  SessionApi, SessionMessage, MessageHandler, SessionHandler, SessionOpenedInfo, SessionClosedInfo, AccountApi, LoginResult,
} from './session/types.ts';
export { CloseCode, EngineType, ProtocolError, type CodecName, type Envelope, type MaintenanceNotice, type ProtocolErrorBody } from './session/protocol.ts';

// Game objects (`api.objects`). `gsf objects types` fills ObjectTypes, ObjectCreateFields and
// ObjectUniqueKeys from the JSON declarations, which types every call field by field.
export type {
  ObjectTypes, ObjectCreateFields, ObjectUniqueKeys, ObjectTypeName, FieldName, UniqueKeyName, CreateFields,
  GameObject, FetchMode, CommitResult, TransactionStats, ObjectAccess, EventTransaction, ObjectsApi,
} from './objects/types.ts';

// REST routes of plugins on the API service (`api.http`) and the writers handlers answer with;
// `ApiStatus` names the failure statuses (`res.fail('NOT_FOUND', …)`), mapped to HTTP in docs/reference/errors.md.
export type { HttpApi, RouteRequest, PluginRouteHandler, RouteOptions } from './api/plugin-routes.ts';
export type { RouteMethod } from './api/route-patterns.ts';
export { ApiStatus, type ApiStatusName, type ResponseWriter } from './api/writer.ts';

// The operations console (`api.console`, component DeployApiService, SPEC 4.6).
export type {
  ConsoleApi, DeployApiHandler, CampaignHandler, CustomQueryHandler, Page, Gift, GiftItem, NoticeMessage, ItemReclaim,
  InventoryReclaim, WriterBase, VoidWriter, BoolWriter, JsonObjectWriter, JsonArrayWriter, JsonWriter, StringWriter, StringArrayWriter,
} from './console/types.ts';
// Several servers as one game (`api.cluster`, component `Cluster`).
export type { ClusterApi, ClusterServer } from './cluster/plugin-api.ts';

// Errors carry a GSF_ERR_* code.
export { GsfError, type ErrorCode } from './errors.ts';
