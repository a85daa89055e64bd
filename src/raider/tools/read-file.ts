/** `read_file {path}`: the text of one file under the root. */
import { readFile, stat } from 'node:fs/promises';
import { confinedPath } from './confine.js';
import { peekString, stringArg, type Tool, type ToolResult } from './tool.js';

/** Bigger files would flood the model's context; refuse them plainly. */
const MAX_BYTES = 1024 * 1024;

export const readFileTool: Tool = {
  spec: {
    name: 'read_file',
    description: 'Read a UTF-8 text file inside the project root.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'path relative to the project root' } },
      required: ['path'],
    },
  },
  access(args) {
    const path = peekString(args, 'path', '');
    return { category: 'read', kind: 'read', title: `Read ${path}`, family: 'Read', subject: { type: 'path', path } };
  },
  async run(args, ctx): Promise<ToolResult> {
    const path = stringArg(args, 'path');
    const abs = await confinedPath(ctx.root, path);
    const info = await stat(abs);
    if (info.isDirectory()) return { ok: false, content: `'${path}' is a directory; use list_dir` };
    if (info.size > MAX_BYTES) return { ok: false, content: `'${path}' is too large (${info.size} bytes, limit ${MAX_BYTES})` };
    return { ok: true, content: await readFile(abs, { encoding: 'utf8', signal: ctx.signal }) };
  },
};
