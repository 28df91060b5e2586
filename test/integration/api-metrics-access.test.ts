import test from 'ava';
import { native } from '../../src/native.ts';
import { ManifestError } from '../../src/config/manifest.ts';
import { startTestServer, waitFor } from './_server.ts';
import { client, parseExposition } from './_http.ts';

test.serial('/metrics exposes every counter and the profiler, matching the counters REST', async (t) => {
  const s = await startTestServer({}, ['probe', 'monitored']);
  try {
    const api = client(s.server.api.port);
    native.counterUpdate('probe', 'quote"and\\slash', 5, false);
    for (let i = 0; i < 10; i++) s.server.invoke('probe.note', { file: '', label: '' }, { name: 'metric_event' });
    await waitFor(() => native.counterReadInt('probe', 'notes') === 10);
    // The profile is recorded once each event completes, just after its handler counted.
    await waitFor(() => native.profilerEvent('metric_event')?.all_time.execution_count === 10, 10000, 'the profiles');
    const r = await api.get('/metrics');
    t.is(r.status, 200);
    t.is(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const m = parseExposition(r.text);
    t.is(m.get('gsf_plugin_value{category="probe",name="notes"}'), 10);
    t.is(m.get('gsf_plugin_value{category="probe",name="quote\\"and\\\\slash"}'), 5);
    t.is(m.get('gsf_plugin_value{category="mon",name="twice_level"}'), 100);
    t.is(m.get('gsf_os_info{type="Linux"}'), 1);
    t.false([...m.keys()].some((k) => k.includes('average/empty')), 'a callable without a value is left out');
    const rest = (await api.get('/v1/counters/process/maxrss/')).body as { value: number };
    t.true(Math.abs(m.get('gsf_process_max_resident_memory_bytes')! - rest.value * 1024) <= rest.value * 1024 * 0.1);
    t.is(m.get('gsf_event_execution_seconds_count{event="metric_event"}'), 10);
    t.is(m.get('gsf_event_execution_seconds_bucket{event="metric_event",le="+Inf"}'), 10);
    t.true(m.has('gsf_event_handler_seconds_sum{event="metric_event"}'));
    t.is(m.get('gsf_event_timeouts_total{event="metric_event"}'), 0);
    t.true(m.get('gsf_events_completed_total')! >= 10);
    t.true(r.text.includes('# TYPE gsf_plugin_value gauge'));
    t.true(r.text.includes('# TYPE gsf_event_execution_seconds histogram'));
  } finally {
    await s.stop();
  }
});

test.serial('a bearer token guards every route; bodies over the limit get 413', async (t) => {
  const s = await startTestServer({ ApiService: { api_service_token: 's3cret', api_service_max_body_bytes: 64 } });
  try {
    const anon = client(s.server.api.port);
    const wrong = client(s.server.api.port, 'nope');
    const ok = client(s.server.api.port, 's3cret');
    for (const path of ['/v1/counters/', '/metrics', '/v1/configurations/', '/v1/status', '/nowhere', '/dashboard/']) {
      for (const c of [anon, wrong]) {
        const r = await c.get(path);
        t.is(r.status, 401, path);
        t.deepEqual(r.body, { error: 'GSF_ERR_UNAUTHORIZED', message: 'missing or invalid bearer token' });
        t.is(r.headers.get('www-authenticate'), 'Bearer');
      }
    }
    t.is((await ok.get('/v1/counters/')).status, 200);
    t.is((await ok.get('/metrics')).status, 200);
    // The scheme's name in any case; the token itself exactly.
    const as = (auth: string): Promise<number> =>
      fetch(`http://127.0.0.1:${s.server.api.port}/v1/status`, { headers: { Authorization: auth } }).then((r) => r.status);
    t.deepEqual(await Promise.all(['bearer s3cret', 'BEARER s3cret', 'Bearer S3CRET', 'Bearers3cret', 'bearer'].map(as)), [200, 200, 401, 401, 401]);
    t.is((await ok.get('/nowhere')).status, 404);
    const big = await ok.post('/v1/configurations/compatible_client_versions', JSON.stringify(Array(20).fill('1.0.0')));
    t.is(big.status, 413);
    t.deepEqual(big.body, { error: 'GSF_ERR_BODY_TOO_LARGE', message: 'request body exceeds 64 bytes' });
    t.is((await ok.post('/v1/configurations/compatible_client_versions', '["1.0.0"]')).status, 200);
  } finally {
    await s.stop();
  }
});

test.serial('the token can come from GSF_API_TOKEN; the API binds to 127.0.0.1 by default', async (t) => {
  process.env.GSF_API_TOKEN = 'from-env';
  const s = await startTestServer();
  delete process.env.GSF_API_TOKEN;
  try {
    t.is((await client(s.server.api.port).get('/v1/counters/')).status, 401);
    t.is((await client(s.server.api.port, 'from-env').get('/v1/counters/')).status, 200);
    t.true(s.logs()[0]!.includes(`listening api=127.0.0.1:${s.server.api.port}`));
  } finally {
    await s.stop();
  }
});

test.serial('a token of white space is refused at start, from the manifest or GSF_API_TOKEN; an empty one is logged once', async (t) => {
  const manifestErr = await t.throwsAsync(startTestServer({ ApiService: { api_service_token: '   ' } }), { instanceOf: ManifestError });
  t.regex(manifestErr.message, /^\(inline manifest\): ApiService\.api_service_token must not be white space only: no request could present it/);
  process.env.GSF_API_TOKEN = ' ';
  try {
    const envErr = await t.throwsAsync(startTestServer(), { instanceOf: ManifestError });
    t.regex(envErr.message, /^GSF_API_TOKEN \(standing in for ApiService\.api_service_token\) must not be white space only/);
  } finally {
    delete process.env.GSF_API_TOKEN;
  }
  // No token: requests are served, and the start says so once.
  const open = await startTestServer();
  try {
    t.is((await client(open.server.api.port).get('/v1/counters/')).status, 200);
    const warned = open.logs().filter((l) => l.includes('API service authentication is off'));
    t.is(warned.length, 1);
    t.regex(warned[0]!, new RegExp(`^W\\d.*\\] API service authentication is off: ApiService\\.api_service_token is empty and GSF_API_TOKEN is unset, so every request to 127\\.0\\.0\\.1:${open.server.api.port} is served`));
  } finally {
    await open.stop();
  }
  const guarded = await startTestServer({ ApiService: { api_service_token: 's3cret' } });
  try {
    t.false(guarded.logs().some((l) => l.includes('authentication is off')));
  } finally {
    await guarded.stop();
  }
});
