/** The tools every run gets. Write/edit/bash come with the permission modes. */
import { listDirTool } from './list-dir.js';
import { readFileTool } from './read-file.js';
import type { Tool } from './tool.js';

export function defaultTools(): Map<string, Tool> {
  return new Map([readFileTool, listDirTool].map((t) => [t.spec.name, t]));
}
