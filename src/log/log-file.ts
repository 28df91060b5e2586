/** Where a manifest's log lines go: `Logging.log_file` resolved against the manifest's folder. */
import path from 'node:path';
import type { Manifest } from '../config/manifest.ts';

/** The log file path of a manifest ('' for standard output). */
export function logFileOf(manifest: Pick<Manifest, 'dir' | 'components'>): string {
  const file = manifest.components.Logging?.log_file as string | undefined;
  return file ? path.resolve(manifest.dir, file) : '';
}
