/**
 * The example game in its two implementations, for protocol tests that run against both: the
 * TypeScript game (plugins/arena, with its managed console half) and the C++ game
 * (plugins/arena-native, administered by the C console plugin plugins/arena-console-native).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Game = 'managed' | 'native';
export const GAMES: readonly Game[] = ['managed', 'native'];

const plugins = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins');
export const ARENA = path.join(plugins, 'arena');
export const ARENA_GAME_NATIVE = path.join(plugins, 'arena-native');
export const ARENA_CONSOLE_NATIVE = path.join(plugins, 'arena-console-native');

/** The plugin folders a manifest lists to run `game`. */
export function arenaPlugins(game: Game): string[] {
  return game === 'managed' ? [ARENA] : [ARENA_GAME_NATIVE, ARENA_CONSOLE_NATIVE];
}

/** The game plugin's name (in log lines). */
export function arenaPluginName(game: Game): string {
  return game === 'managed' ? 'arena' : 'arena-native';
}
