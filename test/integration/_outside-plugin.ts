/**
 * A plugin folder outside this repository, as a game team writes one: TypeScript, no
 * package.json of its own, `import … from 'gsf'`, and a second module imported by path.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Writes the `greeter` plugin into `dir` (created) and returns `dir`. */
export function writeOutsidePlugin(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'words.ts'), `export function greeting(name: string): string {
  return \`hello, \${name}\`;
}
`);
  fs.writeFileSync(path.join(dir, 'index.ts'), `import { definePlugin, GsfError } from 'gsf';
import { greeting } from './words.ts';

/** True when an error gsf throws is an instance of the GsfError this plugin imported. */
function sameGsf(api: { timers: { every(ms: number, event: string): unknown } }): boolean {
  try {
    api.timers.every(-1, 'greeter.nothing');
    return false;
  } catch (err) {
    return err instanceof GsfError && err.code === 'GSF_ERR_BAD_ARGUMENT';
  }
}

export default definePlugin({
  name: 'greeter',
  version: '2.1.0',
  register(api) {
    api.counters.define('greeter', 'same_gsf_on_main', 'The plugin sees the server\\'s own gsf module', sameGsf(api) ? 1 : 0);
    api.sessions.onMessage<{ name: string }>('greeter.hello', (body, msg) => {
      msg.reply({ text: greeting(body.name), sameGsf: sameGsf(api) });
    });
  },
});
`);
  return dir;
}
