/**
 * Client-supplied text cannot write a log line of its own: a player_id sent to the
 * authenticator agent (logged at v >= 1) and a session frame (logged at
 * session_message_logging_level 2) arrive with line breaks and stay on one line.
 */
import test from 'ava';
import fs from 'node:fs';
import WebSocket from 'ws';
import { startFakeSocialnet } from '../fixtures/platforms/socialnet.ts';
import { post, startAgentProcess } from './_auth.ts';
import { startSessionServer, apiUrl } from './_session.ts';
import { waitFor } from './_server.ts';

const FORGED = 'E20991231 00:00:00.000 main] FORGED LINE';
const forgedLine = (l: string): boolean => l.startsWith('E2099') || l.includes('\u2028') || l.includes('\r');

test('a player_id with line breaks stays on one line of the agent log at v >= 1', async (t) => {
  const sn = await startFakeSocialnet({ tokens: { 'sn-alice': { user: '100' } }, friends: {} });
  const agent = await startAgentProcess({ socialnet_base_url: sn.url, socialnet_app_id: sn.appId, socialnet_app_secret: sn.appSecret }, { v: 1 });
  try {
    const playerId = `100\n${FORGED}\r\u2028W20991231 00:00:00.000 main] ALSO FORGED`;
    const answer = await post(`${agent.url}/v1/authentication/socialnet`, { player_id: playerId, access_token: 'sn-alice' });
    t.is(answer.status, 200);
    t.deepEqual(answer.body, { result: 1, description: 'access token belongs to another user' });
    const line = await waitFor(() => agent.out().split('\n').find((l) => l.includes('authentication socialnet player_id=')), 10000, 'the log line');
    t.true(line.includes(`player_id=100\\n${FORGED}\\r\\u2028W20991231 00:00:00.000 main] ALSO FORGED token=sha256:`), line);
    t.deepEqual(agent.out().split('\n').filter(forgedLine), []);
  } finally {
    await agent.stop();
    await sn.close();
  }
});

test('a session frame with line breaks stays on one line at session_message_logging_level 2, and the session carries on', async (t) => {
  const s = await startSessionServer({ RuntimeConfiguration: {} });
  try {
    const put = await fetch(`${apiUrl(s)}/v1/configurations/session_message_logging_level/2`, { method: 'PUT' });
    t.is(put.status, 200);
    const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
    const frames: unknown[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(String(d))));
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    // A frame that is not JSON, and a JSON one with a raw line feed between its tokens.
    ws.send(`hi\n${FORGED}\u2028x`);
    ws.send(`{"type":"echo",\n"body":"${FORGED}","id":1}`);
    await waitFor(() => frames.length >= 2, 10000, 'two answers');
    t.like(frames[0], { type: '_error', body: { code: 'GSF_ERR_MESSAGE_BAD_JSON' } });
    t.deepEqual(frames[1], { type: 'echo', body: FORGED, id: 1 });
    ws.close();
    const text = fs.readFileSync(s.logFile, 'utf8');
    const lines = text.split('\n');
    t.true(lines.some((l) => l.includes(`session message in: session=`) && l.endsWith(`message=hi\\n${FORGED}\\u2028x`)));
    t.true(lines.some((l) => l.includes(`message={"type":"echo",\\n"body":"${FORGED}","id":1}`)));
    t.deepEqual(lines.filter(forgedLine), []);
  } finally {
    await s.stop();
  }
});
