/**
 * The client-version gate (SPEC 9.2): a client is accepted when its `version` URL parameter
 * equals the flag `client_current_version` or is in `client_compatible_versions`. Both are
 * read on every connect, so run-time changes (PUT /v1/configurations/…, POST
 * /v1/configurations/compatible_client_versions) apply to the next connection.
 */
import type { FlagRegistry } from '../config/flags.ts';
import { versionRefusedReason } from './protocol.ts';

/** Null when `version` is accepted, else the close reason naming the required version. */
export function checkClientVersion(flags: FlagRegistry, version: string): string | null {
  const current = flags.get<string>('client_current_version');
  if (version === current) return null;
  const compatible = flags.get<string[]>('client_compatible_versions');
  if (compatible.includes(version)) return null; // no entry is empty (manifest.ts, configurations.ts)
  return versionRefusedReason(version, current, compatible);
}
