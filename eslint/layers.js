/**
 * ESLint rule `gsf-layers/one-way`: value imports between the folders of src/ point down the
 * layers listed in eslint.config.js, never up or sideways, so the folders form no cycle. Type-only
 * imports may point anywhere (they vanish at run time). A file directly in src/ is a layer unit of
 * its own, named after the file (`native.ts` is `native`).
 */
import path from 'node:path';

/** The layer unit of a file under `srcDir`, or null for a file outside it. */
function unitOf(file, srcDir) {
  const rel = path.relative(srcDir, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  return parts.length === 1 ? parts[0].replace(/\.[^.]+$/, '') : parts[0];
}

/** True when the import or export brings in values (not only types). */
function bringsValues(node) {
  if (node.importKind === 'type' || node.exportKind === 'type') return false;
  const specifiers = node.specifiers ?? [];
  if (node.type === 'ImportDeclaration' && specifiers.length > 0) {
    return specifiers.some((s) => s.importKind !== 'type');
  }
  if (node.type === 'ExportNamedDeclaration' && specifiers.length > 0) {
    return specifiers.some((s) => s.exportKind !== 'type');
  }
  return true;
}

export default {
  rules: {
    'one-way': {
      meta: {
        type: 'problem',
        docs: { description: 'value imports between src/ folders follow the layers, downward only' },
        schema: [{
          type: 'object',
          properties: { src: { type: 'string' }, layers: { type: 'array', items: { type: 'array', items: { type: 'string' } } } },
          required: ['src', 'layers'],
          additionalProperties: false,
        }],
        messages: {
          up: "{{from}} (layer {{fromRank}}) may not import values from {{to}} (layer {{toRank}}): layers import downward only (eslint.config.js); hand it over through a hook the lower layer defines",
          unknown: "src/{{unit}} is in no layer of eslint.config.js's gsf-layers/one-way: add it to one",
        },
      },
      create(context) {
        const { src, layers } = context.options[0];
        const srcDir = path.resolve(context.cwd ?? process.cwd(), src);
        const rank = new Map();
        layers.forEach((units, i) => units.forEach((u) => rank.set(u, i)));
        const file = context.filename ?? context.getFilename();
        const from = unitOf(file, srcDir);
        if (from === null) return {};
        const check = (node) => {
          if (!node.source || typeof node.source.value !== 'string' || !node.source.value.startsWith('.')) return;
          if (!bringsValues(node)) return;
          const to = unitOf(path.resolve(path.dirname(file), node.source.value), srcDir);
          if (to === null || to === from) return;
          for (const unit of [from, to]) {
            if (!rank.has(unit)) {
              context.report({ node, messageId: 'unknown', data: { unit } });
              return;
            }
          }
          if (rank.get(to) >= rank.get(from)) {
            context.report({ node, messageId: 'up', data: { from: `src/${from}`, to: `src/${to}`, fromRank: rank.get(from), toRank: rank.get(to) } });
          }
        };
        return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
      },
    },
  },
};
