/**
 * What tells a native plugin from a managed one, and what every thread declares for native
 * calls, without loading the native plugin host (native-loader.ts): a thread whose plugins are
 * all managed loads it only if one is native.
 */
import fs from 'node:fs';
import path from 'node:path';
import { native } from '../native.ts';
import { gsfError } from '../errors.ts';
import type { EventRuntime } from '../events/runtime.ts';
import { parseJsonText } from '../config/json-text.ts';

/** The file in a native plugin's folder that names its library. */
export const NATIVE_MARKER = 'gsf-plugin.json';
export const LIBRARY = /\.(so|dylib|dll)$/;

/** Whether a resolved plugin file is a native library. */
export function isNativeLibrary(file: string): boolean {
  return LIBRARY.test(file);
}

/** The library a native plugin folder names in its gsf-plugin.json, or null for other folders. */
export function nativeLibraryOf(folder: string): string | null {
  const marker = path.join(folder, NATIVE_MARKER);
  if (!fs.existsSync(marker)) return null;
  const label = path.basename(folder);
  let spec: unknown;
  try {
    spec = parseJsonText(fs.readFileSync(marker, 'utf8'));
  } catch (err) {
    throw gsfError('GSF_ERR_PLUGIN_LOAD', label, `${marker} is not valid JSON: ${(err as Error).message}`);
  }
  const library = (spec as { native?: unknown } | null)?.native;
  if (typeof library !== 'string' || !LIBRARY.test(library)) {
    throw gsfError('GSF_ERR_PLUGIN_LOAD', label, `${marker} must be {"native": "<path of the .so, relative to the folder>"}`);
  }
  return path.resolve(folder, library);
}

/** Lets native invoke and timers target every event registered on this thread (managed ones too). */
export function declareNativeTargets(rt: EventRuntime): void {
  native.pluginDeclareEvents([...rt.handlers.keys()].filter((name) => !name.startsWith('_')));
}
