/** `write_file {path, content}`: create or replace a text file under the root (parents are created). */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { confinedPath } from './confine.js';
import { peekString, stringArg, ToolError, type Tool, type ToolResult } from './tool.js';

export const writeFileTool: Tool = {
  spec: {
    name: 'write_file',
    description: 'Create or overwrite a UTF-8 text file inside the project root with the given content.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'path relative to the project root' },
        content: { type: 'string', description: 'the whole new content of the file' },
      },
      required: ['path', 'content'],
    },
  },
  access(args) {
    const path = peekString(args, 'path');
    return { category: 'edit', kind: 'edit', title: `Write ${path}`, family: 'Edit', subject: { type: 'path', path } };
  },
  async run(args, ctx): Promise<ToolResult> {
    const path = stringArg(args, 'path');
    const content = args.content;
    if (typeof content !== 'string') throw new ToolError(`argument 'content' must be a string`);
    const abs = await confinedPath(ctx.root, path);
    await mkdir(dirname(abs), { recursive: true });
    // confinedPath resolved the existing part of the path; mkdir only adds real directories below it.
    await writeFile(abs, content, { encoding: 'utf8', signal: ctx.signal });
    return { ok: true, content: `wrote ${Buffer.byteLength(content)} bytes to ${path}` };
  },
};
