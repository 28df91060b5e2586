// Prints the addon's sources (native/addon-sources.txt) for binding.gyp: `<!@(node native/list-sources.mjs)`.
import fs from 'node:fs';

const list = fs.readFileSync(new URL('addon-sources.txt', import.meta.url), 'utf8');
process.stdout.write(list.split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).join('\n'));
