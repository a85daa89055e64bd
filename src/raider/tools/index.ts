/** The tools a run offers, by name. The hall tools come only under a hall (hall.ts). */
import { bashTool } from './bash.js';
import { editFileTool } from './edit-file.js';
import { listDirTool } from './list-dir.js';
import { readFileTool } from './read-file.js';
import type { Tool } from './tool.js';
import { writeFileTool } from './write-file.js';

export function toolMap(tools: readonly Tool[]): Map<string, Tool> {
  return new Map(tools.map((t) => [t.spec.name, t]));
}

export function defaultTools(): Map<string, Tool> {
  return toolMap([readFileTool, listDirTool, writeFileTool, editFileTool, bashTool]);
}
