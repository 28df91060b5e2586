/**
 * What the plugin list and a reload answer (`GET /v1/plugins/`, `POST /v1/plugins/reload`): the
 * REST bodies, field for field (docs/reference/rest.md).
 */
/** One plugin as `GET /v1/plugins/` lists it. */
export interface PluginInfo {
  name: string;
  kind: 'managed' | 'native';
  version: string;
  /** The entry file or library the manifest names. */
  file: string;
  loaded_at: string;
  /** SHA-256 of the plugin's files as loaded. */
  hash: string;
  /** The files on disk differ from the loaded ones (a reload would load them); null if they cannot be read. */
  source_changed: boolean | null;
  reloads: number;
}

/** One plugin a reload replaced. */
export interface ReloadedPlugin {
  name: string;
  kind: 'managed' | 'native';
  previous: { version: string; hash: string };
  version: string;
  hash: string;
  loaded_at: string;
  reloads: number;
}

/** The answer of a reload that went through (also when nothing had changed). */
export interface ReloadOutcome {
  reloaded: ReloadedPlugin[];
  /** Plugins asked for (or, for "every changed plugin", looked at) whose source had not changed. */
  unchanged: string[];
  /** From the request until the new version served, ms. */
  duration_ms: number;
  /** Until every new event thread had loaded the plugins, ms. */
  load_ms: number;
  /** Stop hooks of the old version and start hooks of the new one that failed (logged too). */
  warnings: string[];
}
