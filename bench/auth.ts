/**
 * bench/auth: requests per second of the authenticator agent (a `gsf authenticator` process) on
 * the test endpoint and on cached socialnet checks, against a raw uWebSockets.js route returning
 * the same JSON (its own process), measured in the same run with the same load generator.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeSocialnet } from '../test/fixtures/platforms/socialnet.ts';
import { load } from './auth-load.ts';
import { printReport } from './report.ts';
import { startProcess, stopProcess } from './processes.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const CONNECTIONS = 64;
const DEPTH = 1;
const DURATION_MS = 1000;
const ROUNDS = 8;

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

export async function run(): Promise<void> {
  const sn = await startFakeSocialnet({ tokens: { 'bench-token': { user: '4242' } }, friends: {} });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-bench-auth-'));
  const manifest = path.join(dir, 'authenticator.MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({
    components: [
      { name: 'Authenticator', arguments: {
        enabled: 1, port: 0, cache_ttl_in_sec: 3600,
        socialnet_base_url: sn.url, socialnet_app_id: sn.appId, socialnet_app_secret: sn.appSecret,
      } },
      // v 0: no per-request lines; the start line (INFO) still tells the port.
      { name: 'Logging', arguments: { minloglevel: 0, v: 0 } },
    ],
  }));
  const agent = await startProcess([path.join(root, 'bin', 'gsf.mjs'), 'authenticator', '--manifest', manifest], /listening authenticator=[^:]+:(\d+)/);
  const baseline = await startProcess(['--import', 'tsx', path.join(here, 'auth-baseline.ts')], /port=(\d+)/);
  try {
    const testBody = JSON.stringify({ player_id: 'bench-player' });
    const snBody = JSON.stringify({ player_id: '4242', access_token: 'bench-token' });
    const rounds: Array<{ base: number; test: number; social: number }> = [];
    const measure = async (port: number, p: string, body: string): Promise<number> => {
      const r = await load({ port, path: p, body, connections: CONNECTIONS, depth: DEPTH, durationMs: DURATION_MS });
      if (r.non200 !== 0 || r.mismatched !== 0 || r.sample !== '{"result":0,"description":""}') {
        throw new Error(`bench/auth: unexpected answers on ${p}: ${JSON.stringify(r)}`);
      }
      return r.requestsPerSec;
    };
    // Short interleaved rounds, medians of the figures and of the per-round ratios: each ratio
    // compares windows a second apart, which keeps it steady when the machine's load drifts.
    for (let round = 0; round < ROUNDS; round++) {
      rounds.push({
        base: await measure(baseline.port, '/v1/authentication/test', testBody),
        test: await measure(agent.port, '/v1/authentication/test', testBody),
        social: await measure(agent.port, '/v1/authentication/socialnet', snBody),
      });
    }
    const med = { base: median(rounds.map((r) => r.base)), test: median(rounds.map((r) => r.test)), social: median(rounds.map((r) => r.social)) };
    const ratio = { test: median(rounds.map((r) => r.test / r.base)), social: median(rounds.map((r) => r.social / r.base)) };
    const platformCalls = sn.callsFor('bench-token');
    printReport('auth', [
      { label: 'agent, POST /v1/authentication/test', value: med.test, unit: 'req/s' },
      { label: 'agent, POST /v1/authentication/socialnet (cached)', value: med.social, unit: 'req/s' },
      { label: 'baseline: raw uWebSockets.js route, same JSON', value: med.base, unit: 'req/s' },
      { label: 'ratio test / baseline (median of rounds)', value: ratio.test, unit: 'x' },
      { label: 'ratio socialnet cached / baseline (median)', value: ratio.social, unit: 'x' },
      { label: 'socialnet calls made for all cached checks', value: platformCalls, unit: 'calls' },
    ], {
      connections: CONNECTIONS, pipeline_depth: DEPTH, duration_ms: DURATION_MS, rounds: ROUNDS, cores: os.availableParallelism(),
      test_endpoint: { agent_req_per_sec: Math.round(med.test), baseline_req_per_sec: Math.round(med.base), ratio: +ratio.test.toFixed(2) },
      socialnet_cached: {
        agent_req_per_sec: Math.round(med.social), baseline_req_per_sec: Math.round(med.base), ratio: +ratio.social.toFixed(2),
        platform_calls: platformCalls,
      },
    });
  } finally {
    await stopProcess(agent.child);
    await stopProcess(baseline.child);
    await sn.close();
  }
}
