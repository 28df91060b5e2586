import { register } from 'tsx/esm/api';
register();
const m = await import('/work/wt-fresh-machine/src/plugins/plugin-modules.ts');
try { await m.requirePlugin('/tmp/fm-out/plugins/hello/index.ts'); console.log('ok'); } catch (e) { console.log(e.stack); }
