/**
 * The client SDK as a browser game ships it: bundled for the browser (esbuild, platform browser)
 * with no Node-only module, loaded in a real headless Chromium page (its own WebSocket) against a
 * real gsf server; a send after close() was called throws rather than going to a closing socket.
 */
import test from 'ava';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { chromiumForFile } from './_chromium.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const sdkEntry = path.join(root, 'src', 'sdk', 'index.ts');
const { openTab } = chromiumForFile(test, {});

let s: SessionServer | undefined;
let pageServer: http.Server | undefined;
let pageUrl = '';

test.before(async () => {
  const out = await build({ entryPoints: [sdkEntry], bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
  const sdk = out.outputFiles[0]!.text;
  pageServer = http.createServer((req, res) => {
    if (req.url === '/sdk.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(sdk);
    } else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>game</title><script type="module">import * as gsf from "/sdk.js"; window.gsf = gsf; window.ready = true;</script>');
    }
  });
  await new Promise<void>((r) => pageServer!.listen(0, '127.0.0.1', () => r()));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
  s = await startSessionServer();
});
test.after.always(async () => {
  await s?.stop();
  await new Promise<void>((r) => (pageServer ? pageServer.close(() => r()) : r()));
});

async function tab(): Promise<{ page: Page; errors: string[] }> {
  const t = await openTab();
  await t.page.goto(pageUrl);
  await t.page.waitForFunction('window.ready === true');
  return t;
}

test.serial('bundling the SDK for the browser (esbuild, platform browser) succeeds and pulls in no Node-only module', async (t) => {
  const result = await build({ entryPoints: [sdkEntry], bundle: true, format: 'esm', platform: 'browser', write: false, metafile: true, logLevel: 'silent' })
    .then((r) => ({ errors: [] as string[], nodeImports: Object.values(r.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path)).filter((p) => p.startsWith('node:')) }),
      (err: { errors?: Array<{ text: string }> }) => ({ errors: (err.errors ?? []).map((e) => e.text), nodeImports: [] as string[] }));
  t.deepEqual(result, { errors: [], nodeImports: [] });
});

test.serial('in the browser, send() after close() was called throws GsfRequestError closed instead of dropping the message unseen', async (t) => {
  const { page, errors } = await tab();
  try {
    const r = await page.evaluate(`(async () => {
      const { GsfClient } = window.gsf;
      const c = await GsfClient.connect({ url: ${JSON.stringify(s!.url)}, version: '1.0.0', codec: 'json' });
      const closing = c.close(1000, 'player quit');
      let sent;
      try { c.send('echo', 'lost?'); sent = 'no throw'; } catch (e) { sent = { name: e.name, code: e.code, type: e.type }; }
      return { sent, closed: await closing };
    })()`);
    t.deepEqual(r, { sent: { name: 'GsfRequestError', code: 'closed', type: 'echo' }, closed: { code: 1000, reason: 'player quit' } });
    t.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test.serial('in the browser, the bundled SDK connects with either codec and gets its replies', async (t) => {
  const { page, errors } = await tab();
  try {
    const r = await page.evaluate(`(async () => {
      const { GsfClient } = window.gsf;
      const out = [];
      for (const codec of ['json', 'msgpack']) {
        const c = await GsfClient.connect({ url: ${JSON.stringify(s!.url)}, version: '1.0.0', codec });
        out.push([codec, await c.request('echo', { hello: codec, n: 42 })]);
        await c.close();
      }
      return out;
    })()`);
    t.deepEqual(r, [['json', { hello: 'json', n: 42 }], ['msgpack', { hello: 'msgpack', n: 42 }]]);
    t.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
