/** `list_dir {path?}`: the entries of a directory under the root, one per line, directories with `/`. */
import { readdir } from 'node:fs/promises';
import { confinedPath } from './confine.js';
import { peekString, stringArg, type Tool, type ToolResult } from './tool.js';

export const listDirTool: Tool = {
  spec: {
    name: 'list_dir',
    description: 'List a directory inside the project root (default: the root itself).',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'path relative to the project root' } },
    },
  },
  access(args) {
    const path = peekString(args, 'path', '.');
    return { category: 'read', kind: 'read', title: `List ${path}`, family: 'Read', subject: { type: 'path', path } };
  },
  async run(args, ctx): Promise<ToolResult> {
    const path = stringArg(args, 'path', '.');
    const abs = await confinedPath(ctx.root, path);
    const entries = await readdir(abs, { withFileTypes: true });
    const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
    return { ok: true, content: names.join('\n') };
  },
};
