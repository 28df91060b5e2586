/**
 * The components a manifest may list, their arguments, types, defaults and ranges.
 * Every argument has a default, so an empty manifest runs.
 */
import os from 'node:os';

/** Value types of manifest arguments and flags (names as shown by runtime configuration). */
export type ArgType = 'bool' | 'int32' | 'uint64' | 'double' | 'string' | 'string_list';

export interface ArgSpec {
  type: ArgType;
  default: boolean | number | string | string[];
  desc: string;
  /** Smallest allowed value for numbers (uint64 is always >= 0). */
  min?: number;
  /** Largest allowed value for numbers, and why, shown when a value is refused. */
  max?: number;
  maxReason?: string;
  /** Allowed values for strings. */
  oneOf?: readonly string[];
  /** A secret compared byte for byte with what requests carry: white space alone, or around it, is refused. */
  secret?: boolean;
  /** An address to listen on or reach: empty, or holding white space, is refused (uWS reads '' as every interface). */
  address?: boolean;
  /** When set, the argument is also a flag in the flag registry under this name. */
  flag?: { mutable: boolean };
}

export type ComponentSchema = Record<string, ArgSpec>;

const bool = (def: boolean, desc: string, flag?: ArgSpec['flag']): ArgSpec => ({ type: 'bool', default: def, desc, flag });
const u64 = (def: number, desc: string, min = 0, flag?: ArgSpec['flag']): ArgSpec => ({ type: 'uint64', default: def, desc, min, flag });
/** The longest a timer waits (2^31 - 1 ms, about 24.8 days): a longer one would fire at once. */
export const MAX_TIMER_MS = 0x7fffffff;
/** A time in milliseconds that a timer waits: a uint64 at most MAX_TIMER_MS. */
export const ms = (def: number, desc: string, min = 0, flag?: ArgSpec['flag']): ArgSpec =>
  ({ ...u64(def, desc, min, flag), max: MAX_TIMER_MS, maxReason: 'the longest a timer can wait, about 24.8 days' });
const i32 = (def: number, desc: string, flag?: ArgSpec['flag'], range: { min?: number; max?: number } = {}): ArgSpec =>
  ({ type: 'int32', default: def, desc, flag, ...range });
const str = (def: string, desc: string, extra: Partial<ArgSpec> = {}): ArgSpec => ({ type: 'string', default: def, desc, ...extra });
const list = (desc: string): ArgSpec => ({ type: 'string_list', default: [], desc });
/** A TCP port (0 where the listener picks a free one). */
export const port = (def: number, desc: string, min = 0, flag?: ArgSpec['flag']): ArgSpec =>
  ({ ...u64(def, desc, min, flag), max: 65535, maxReason: 'the largest TCP port' });
/** A period in seconds that a timer waits: at most MAX_TIMER_MS once in milliseconds. */
const sec = (def: number, desc: string, min = 0): ArgSpec =>
  ({ ...u64(def, desc, min), max: Math.floor(MAX_TIMER_MS / 1000), maxReason: 'the longest a timer can wait, about 24.8 days' });
const mutable = { mutable: true } as const;

/** Cores this process may use (the cgroup or affinity limit where one applies). */
export const CORES = os.availableParallelism();

/**
 * Most event threads: 4 per core. Threads past the cores help only handlers that block their
 * thread (a synchronous authenticator call, a long computation), and each costs about 25 MB
 * of memory (77 threads took a server from 125 MB to 1.6 GB), so the bound keeps a mistyped
 * value from taking the machine down. 4 per core keeps SPEC's default of 4 valid on one core.
 */
export const MAX_EVENT_THREADS = 4 * CORES;

/** Built-in components. Later features add theirs here. */
export const COMPONENTS: Record<string, ComponentSchema> = {
  AppInfo: {
    client_current_version: str('1.0.0', 'Required client version for connecting', { flag: mutable }),
    client_compatible_versions: { ...list('Client versions accepted besides the current one'), flag: { mutable: false } },
  },
  EventDispatcher: {
    event_threads_size: {
      ...u64(4, 'Number of main event threads', 1, mutable),
      max: MAX_EVENT_THREADS, maxReason: `4 event threads per core, ${CORES} core${CORES === 1 ? '' : 's'}`,
    },
    enable_event_profiler: bool(true, 'Event profiling on/off', mutable),
    slow_event_log_threshold_in_ms: ms(300, 'Slow-event log threshold', 0, { mutable: false }),
    event_timeout_in_ms: ms(30000, 'Time until an event is timed out', 1, { mutable: false }),
    enable_inheriting_event_tag: bool(true, "Inherit the caller's tag when no tag is given", { mutable: false }),
    enable_random_event_tag: bool(true, 'When inheriting is off and no tag is given, generate a random tag; when false, the null tag', { mutable: false }),
    enable_event_thread_checker: bool(true, 'Check once per second whether an event thread is blocked', { mutable: false }),
    enable_outstanding_event_profiler: bool(true, 'Profile currently running events', { mutable: false }),
    event_thread_hang_threshold_in_ms: ms(30000, 'How long one event may hold a thread before the hang line is written', 1),
    event_thread_hang_report_interval_in_ms: ms(60000, 'How often the hang line repeats while the thread stays stuck', 1),
    event_batch_size: u64(256, 'Most events a worker claims from the queue at once (claims also stop at about 1 ms of measured work)', 1),
    event_task_budget_in_ms: ms(20, "How long an event worker runs claims back to back before it lets its thread's event loop run", 1),
    max_awaiting_events_per_thread: u64(1000, 'Most events awaiting I/O at once on one event thread; at the cap it claims no new event until one finishes', 1),
    shutdown_drain_timeout_in_ms: ms(10000, 'How long a stopping server waits for queued events to finish', 0),
    plugin_reload_timeout_in_ms: ms(30000, 'How long a plugin reload (and the new event threads of a resize) may take to load; '
      + 'past it the new version is refused and the running one serves on', 1, { mutable: false }),
    event_thread_young_generation_in_mb: {
      ...u64(96, "Most memory of an event thread's young generation (V8's short-lived objects); 0: V8's default", 0, { mutable: false }),
      max: 2048, maxReason: "V8's young generation",
    },
  },
  ApiService: {
    api_service_address: str('127.0.0.1', 'Address the API service listens on', { address: true }),
    api_service_port: port(8014, 'Port of the API service (0 picks a free port)'),
    api_service_max_body_bytes: u64(1048576, 'Largest accepted request body', 1),
    api_service_token: str('', 'Bearer token required on every API-service request (also GSF_API_TOKEN); empty: none', { secret: true }),
    api_service_handler_timeout_in_ms: ms(10000, 'How long a plugin route or console handler may take to answer before the request gets 504', 1),
  },
  // The operations-console API under /cs-api/v1/ (SPEC 4.6), on the API-service listener.
  DeployApiService: {
    deploy_api_service_use_managed: bool(true, 'Console handlers of managed plugins serve (true) or those of native plugins (false)'),
    deploy_api_max_page_size: {
      ...u64(100, 'Largest page_size a paged console request may ask for', 1),
      max: 10_000, maxReason: 'a page is built and sent whole, as one answer',
    },
  },
  CounterService: {
    counter_monitoring_interval_in_sec: sec(30, 'How often monitored counters are checked', 1),
    warning_threshold_event_queue_length: u64(3000, 'Warn when more events wait in the queue'),
    warning_threshold_outstanding_fetch_query: u64(5000, 'Warn when more object reads wait'),
    warning_threshold_outstanding_update_query: u64(5000, 'Warn when more object writes wait'),
    warning_threshold_slow_query_in_sec: u64(1, 'Warn when a query takes longer'),
    warning_threshold_slow_distribution_in_sec: u64(3, 'Warn when the distribution layer takes longer'),
    refresh_interval_in_sec: sec(1, 'Refresh interval of the built-in counters', 1),
  },
  RuntimeConfiguration: {
    additional_configurations: list('User flags that become mutable over REST'),
  },
  SessionService: {
    websocket_address: str('0.0.0.0', 'Address the client WebSocket listener binds', { address: true }),
    websocket_port: port(8012, 'Client WebSocket port (0 picks a free port)'),
    io_threads_size: u64(1, 'Threads that own client sockets (1: the main thread; at most the cores)', 1),
    max_message_bytes: { ...u64(65536, 'Largest client message; larger ones get a GSF_ERR_MESSAGE_TOO_BIG error frame', 1), max: 256 * 1024 * 1024, maxReason: '256 MiB: uWebSockets.js counts frame sizes in 32 bits' },
    max_backpressure_bytes: { ...u64(1048576, 'A session whose unsent data passes this is closed with code 4008', 1), max: 1024 * 1024 * 1024, maxReason: '1 GiB: uWebSockets.js counts buffered bytes in 32 bits' },
    idle_timeout_in_sec: { ...u64(120, 'Close a connection silent this long (0 off; pings keep live clients open)'), max: 960, maxReason: 'the longest uWebSockets.js allows' },
    send_pings_automatically: bool(true, 'Ping idle clients so that live ones stay connected'),
    close_session_when_event_timeout: bool(false, 'Close the session (code 4011) when one of its events times out'),
    account_login_policy: str('replace', 'Second login of an account: replace the first session or refuse', { oneOf: ['replace', 'refuse'] }),
  },
  Maintenance: {
    maintenance_file: str('', 'JSON file with date_start, date_end and messages (relative to the manifest)'),
    under_maintenance: bool(false, 'Start with maintenance on (needs maintenance_file)'),
    follow_schedule: bool(false, 'Turn maintenance on at date_start and off at date_end by itself'),
  },
  // Read on every thread through (immutable) flags, so plugins on event workers can authenticate.
  AuthenticationClient: {
    use_authenticator: bool(false, 'Ask the authenticator agent; false: every authentication request succeeds (local testing)', { mutable: false }),
    remote_authenticator_ip_address: str('127.0.0.1', 'Address of the authenticator agent', { flag: { mutable: false }, address: true }),
    remote_authenticator_port: port(12800, 'Port of the authenticator agent', 1, { mutable: false }),
    authenticator_request_timeout_in_ms: ms(10000, 'How long a request to the agent may take before it is a system error', 1, { mutable: false }),
  },
  // The object store (SPEC 3.3, 6.2.6); read by the objects module, not through flags.
  ObjectStore: {
    database_url: str('', 'PostgreSQL connection URL (postgres://…); empty: the embedded SQLite database'),
    sqlite_path: str('data/gsf.sqlite', 'SQLite database file, relative to the manifest'),
    sqlite_synchronous: str('full', 'full: a reply survives power loss; normal: it survives a process crash', { oneOf: ['full', 'normal'] }),
    sqlite_busy_timeout_in_ms: ms(5000, 'How long a SQLite statement waits for a lock held by another process (a backup, a sqlite3 shell) before it fails'),
    cache_size_in_bytes: u64(64 * 1024 * 1024, 'Byte budget of the process-wide object cache'),
    max_event_reruns: u64(5, 'Reruns of an event whose objects changed meanwhile, before it fails'),
    commit_group_max_events: u64(1000, 'Most events committed in one database transaction', 1),
    read_connections_per_thread: u64(2, 'PostgreSQL connections per thread for cache misses', 1),
    database_query_timeout_in_ms: ms(30000, 'How long a PostgreSQL query may wait for its answer before its connection is taken for dead (0: forever)'),
    decoded_copies_per_thread: { ...u64(16384, 'Objects an event thread keeps decoded for reads, rounded up to a power of two (0: none)'), max: 1 << 22, maxReason: 'the largest table an event thread keeps' },
  },
  // Several servers as one game (src/cluster/): presence, cross-server messages and broadcasts on Redis.
  Cluster: {
    redis_url: str('redis://127.0.0.1:6379', 'Redis URL (redis://[user:password@]host:port[/db], rediss:// for TLS)'),
    server_id: str('', "This server's id in the cluster; empty: host:port (the WebSocket port, else the API port)"),
    cluster_name: str('gsf', 'Prefix of every Redis key, so that several clusters can share one Redis'),
    heartbeat_interval_in_ms: ms(1000, 'How often this server renews its presence', 50),
    presence_ttl_in_ms: ms(5000, "How long a server's presence lasts without a heartbeat (its sessions then leave presence)", 100),
    request_timeout_in_ms: ms(3000, 'How long a request to other servers (counters, broadcasts, invoke) waits for their answers', 1),
    connect_timeout_in_ms: ms(5000, 'How long the start waits for Redis before it fails', 1),
    max_queued_messages: u64(100000, 'Messages for other servers held while Redis is unreachable; past this, new ones are dropped (logged and counted)', 1),
    stream_max_length: u64(100000, "Batches kept in a server's stream before the oldest unread are trimmed", 100),
  },
  Logging: {
    minloglevel: i32(0, 'Minimum log level: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL', mutable, { min: 0, max: 3 }),
    v: i32(0, 'Log verbosity: verbose lines up to this level are written', mutable, { min: 0 }),
    alsologtostderr: bool(false, 'Also log to standard error', mutable),
    log_file: str('', 'Append log lines to this file instead of standard output'),
    log_format: str('text', 'Log line format', { oneOf: ['text', 'json'] }),
  },
};

/**
 * Components that start a service, and the services each needs. A service runs only when the
 * manifest lists its component (SPEC 9.3: a project lists what it uses); the other components
 * configure parts every server has, and take their defaults when not listed. A listed service
 * whose dependency is not listed stops the start (SPEC 4.2 and 8: runtime configuration and the
 * counter service need the API service).
 */
export const SERVICES: Record<string, readonly string[]> = {
  ApiService: [],
  CounterService: ['ApiService'],
  RuntimeConfiguration: ['ApiService'],
  DeployApiService: ['ApiService'],
  SessionService: [],
  Cluster: [],
};

/** Flags that exist before the feature reading them has its component. */
export const STANDALONE_FLAGS: Record<string, ArgSpec> = {
  session_message_logging_level: i32(0, 'Session message logging: 0 none, 1 type and length, 2 entire message', mutable, { min: 0, max: 2 }),
  rpc_message_logging_level: i32(0, 'Server-to-server RPC message logging: 0 none, 1 type and length, 2 entire message', mutable, { min: 0, max: 2 }),
  // Set by the Cluster component once the server has its id, so that event workers can read it.
  cluster_server_id: str('', "This server's id in the cluster (empty: no Cluster component)", { flag: { mutable: false } }),
};
