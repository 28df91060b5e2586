/**
 * Two players against a running server (`npm start` in another terminal):
 *
 *   node --import tsx examples/two-clients.ts [ws://127.0.0.1:8012]
 *
 * ada (json) and grace (msgpack) say hello, chat in the lobby and a private room, race to
 * 20 clicks each, and read the leaderboard. A second "ada" then logs in and replaces the first.
 */
import { GsfClient } from 'gsf/sdk';

const url = process.argv[2] ?? 'ws://127.0.0.1:8012';
const version = process.env.GSF_CLIENT_VERSION ?? '1.0.0';

async function main(): Promise<void> {
  const ada = await GsfClient.connect({ url, version, codec: 'json' });
  const grace = await GsfClient.connect({ url, version, codec: 'msgpack' });
  for (const [name, c] of [['ada', ada], ['grace', grace]] as const) {
    c.on<{ room: string; from: string; text: string }>('chat', (m) => console.log(`[${name} sees] #${m.room} ${m.from}: ${m.text}`));
    c.on<{ room: string; name: string }>('joined', (m) => console.log(`[${name} sees] ${m.name} joined #${m.room}`));
    c.onMaintenance((m) => console.log(`[${name} sees] maintenance ${m.date_start} to ${m.date_end}: ${m.messages}`));
  }
  console.log('ada   hello →', await ada.request('hello', { name: 'ada' }));
  console.log('grace hello →', await grace.request('hello', { name: 'grace' }));
  await ada.request('say', { room: 'lobby', text: 'hi grace, race you to 20' });
  await grace.request('join', { room: 'duel' });
  await ada.request('join', { room: 'duel' });
  await grace.request('say', { room: 'duel', text: 'go!' });

  const race = async (c: GsfClient): Promise<number[]> => {
    const scores = await Promise.all(Array.from({ length: 20 }, () => c.request<{ score: number }>('click')));
    return scores.map((s) => s.score);
  };
  const [a, g] = await Promise.all([race(ada), race(grace)]);
  console.log('ada   scores in reply order:', a.join(' '));
  console.log('grace scores in reply order:', g.join(' '));
  console.log('top →', JSON.stringify(await grace.request('top')));

  const ada2 = await GsfClient.connect({ url, version, codec: 'json' });
  console.log('second ada hello →', await ada2.request('hello', { name: 'ada' }));
  const closed = await ada.closed;
  console.log(`first ada closed: ${closed.code} ${closed.reason}`);
  await Promise.all([grace.close(), ada2.close()]);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
