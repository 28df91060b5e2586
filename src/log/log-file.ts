/** Where a manifest's log lines go: `Logging.log_file` resolved against the manifest's folder. */
import path from 'node:path';
import type { Manifest } from '../config/manifest.ts';
import { openLogFile } from './logger.ts';

/** The log file path of a manifest ('' for standard output). */
export function logFileOf(manifest: Pick<Manifest, 'dir' | 'components'>): string {
  const file = manifest.components.Logging?.log_file as string | undefined;
  return file ? path.resolve(manifest.dir, file) : '';
}

/**
 * Opens `file` now (see `openLogFile`); null, or why it cannot be opened, naming the manifest and
 * `Logging.log_file` as written there (`given`): the start stops with that line.
 */
export function openManifestLog(file: string, manifestFile: string, given: unknown): string | null {
  try {
    openLogFile(file);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return `${manifestFile}: Logging.log_file '${String(given)}' cannot be opened (${code})`;
  }
}
