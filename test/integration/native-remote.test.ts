/**
 * ABI 1.2 cluster and authenticator calls of a native plugin: authenticate and personal info
 * against a real agent process and the fake socialnet platform (as auth-client.test.ts), and the
 * cluster calls without the Cluster component, answered as managed: invoke names no server
 * (NOT_FOUND, GSF_ERR_CLUSTER_UNKNOWN_SERVER), send to an account goes to this server (0: the
 * account is not logged in). Every continuation's user data is released once.
 */
import test from 'ava';
import path from 'node:path';
import { authenticationRequest, makeSocialnetAuthenticationKey } from '../../src/index.ts';
import { native } from '../../src/native.ts';
import { startFakeSocialnet, type FakeSocialnet } from '../fixtures/platforms/socialnet.ts';
import { fixtures, startTestServer, waitFor, type TestServer } from './_server.ts';
import { startAgentProcess, type AgentProcess } from './_auth.ts';

const PROBE = path.join(fixtures, 'native-plugins', 'native-results');
const value = (name: string): number => native.counterValue('results', name) ?? 0;

let sn: FakeSocialnet;
let agent: AgentProcess;
let s: TestServer;

const line = (prefix: string, from: number): Promise<string> =>
  waitFor(() => s.logs().slice(from).find((l) => l.includes(`native-results: ${prefix}`)), 20000, prefix)
    .then((l) => l.split('native-results: ')[1]!);

test.before(async () => {
  sn = await startFakeSocialnet({ tokens: { 'sn-alice': { user: '100' } }, friends: { 100: ['101', '102', '103'] } });
  agent = await startAgentProcess({ socialnet_base_url: sn.url, socialnet_app_id: sn.appId, socialnet_app_secret: sn.appSecret });
  s = await startTestServer({
    EventDispatcher: { event_threads_size: 2 },
    AuthenticationClient: { use_authenticator: true, remote_authenticator_ip_address: '127.0.0.1', remote_authenticator_port: agent.port },
  }, ['objects-probe', PROBE]);
});

test.after.always(async () => {
  await s?.stop();
  await agent?.stop();
  await sn?.close();
});

test.serial('authenticate and personal info answer with the agent\'s response as a msgpack map', async (t) => {
  const at = s.logs().length;
  s.server.invoke('results.auth', authenticationRequest('socialnet', '100', makeSocialnetAuthenticationKey('sn-alice')));
  const auth = await line('authenticate ', at);
  t.true(auth.startsWith('authenticate friends=0 status=OK code= id= number=0 reason_code=0'), auth);
  const info = await line('personal info ', at);
  t.true(info.startsWith('personal info friends=3 status=OK code= id= number=0 reason_code=0'), info);
  const bad = s.logs().length;
  s.server.invoke('results.auth', authenticationRequest('socialnet', '100', makeSocialnetAuthenticationKey('sn-nobody')));
  const refused = await line('authenticate ', bad);
  t.regex(refused, /^authenticate friends=0 status=OK code= id= number=0 reason_code=[1-9]/);
});

test.serial('without the Cluster component: invoke is NOT_FOUND (GSF_ERR_CLUSTER_UNKNOWN_SERVER), send to an account is local', async (t) => {
  const at = s.logs().length;
  s.server.invoke('results.cluster', ['server-b', 'results.compute', 'nobody']);
  const invoked = await line('cluster invoke ', at);
  t.true(invoked.startsWith("cluster invoke status=NOT_FOUND code=GSF_ERR_CLUSTER_UNKNOWN_SERVER id= number=0 -=0 message=no live server 'server-b' in the cluster"), invoked);
  t.is(await line('cluster send ', at), 'cluster send status=OK code= id= number=0 -=0 message=');
});

test.serial('at shutdown every continuation\'s user data was released once', async (t) => {
  await s.stop();
  t.true(value('made') >= 7);
  t.is(value('dropped'), value('made'));
});
