/**
 * `edit_file {path, old_string, new_string, replace_all?}`: replace an exact
 * piece of a file. The piece must occur exactly once (unless replace_all),
 * so an edit never lands somewhere the model did not mean.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { confinedPath } from './confine.js';
import { peekString, stringArg, ToolError, type Tool, type ToolResult } from './tool.js';

function countOccurrences(text: string, piece: string): number {
  let n = 0;
  for (let i = text.indexOf(piece); i !== -1; i = text.indexOf(piece, i + piece.length)) n++;
  return n;
}

export const editFileTool: Tool = {
  spec: {
    name: 'edit_file',
    description:
      'Replace old_string with new_string in a text file inside the project root. old_string must match exactly ' +
      '(whitespace included) and occur once, unless replace_all is true.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'path relative to the project root' },
        old_string: { type: 'string', description: 'the exact text to replace' },
        new_string: { type: 'string', description: 'the text to put in its place' },
        replace_all: { type: 'boolean', description: 'replace every occurrence' },
      },
      required: ['path', 'old_string', 'new_string'],
    },
  },
  access(args) {
    const path = peekString(args, 'path');
    return { category: 'edit', kind: 'edit', title: `Edit ${path}`, family: 'Edit', subject: { type: 'path', path } };
  },
  async run(args, ctx): Promise<ToolResult> {
    const path = stringArg(args, 'path');
    const oldString = stringArg(args, 'old_string');
    const newString = args.new_string;
    if (typeof newString !== 'string') throw new ToolError(`argument 'new_string' must be a string`);
    const replaceAll = args.replace_all === true;
    const abs = await confinedPath(ctx.root, path);
    const text = await readFile(abs, { encoding: 'utf8', signal: ctx.signal });
    const count = countOccurrences(text, oldString);
    if (count === 0) return { ok: false, content: `old_string does not occur in ${path}` };
    if (count > 1 && !replaceAll) {
      return { ok: false, content: `old_string occurs ${count} times in ${path}; give more context or set replace_all` };
    }
    const updated = replaceAll ? text.split(oldString).join(newString) : text.replace(oldString, () => newString);
    await writeFile(abs, updated, { encoding: 'utf8', signal: ctx.signal });
    return { ok: true, content: `replaced ${replaceAll ? count : 1} occurrence(s) in ${path}` };
  },
};
