/**
 * Writes docs/protocol.md from the protocol's schemas (src/protocol): the
 * frames, every command with its payload and reply, and every bus event with
 * its fields. The schemas are the documentation; a test fails when the
 * committed file differs from what this prints.
 *
 *   npm run protocol-doc
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { COMMAND_PAYLOADS } from '../src/protocol/commands.js';
import { BUS_EVENTS, EnvelopeFields } from '../src/protocol/events.js';
import { Frame, SubscribePayload } from '../src/protocol/frames.js';
import { COMMAND_REPLIES, ErrorReply } from '../src/protocol/replies.js';

export const PROTOCOL_DOC = fileURLToPath(new URL('../docs/protocol.md', import.meta.url));
export const REFRESH_COMMAND = 'npm run protocol-doc';

/** The part of a JSON Schema the document reads. */
type JsonSchema = z.core.JSONSchema.JSONSchema;

function jsonSchema(schema: z.ZodType): JsonSchema {
  // What a client writes: a field that may be null or absent shows so.
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
}

/** A schema where JSON Schema allows `true`/`false` (anything/nothing). */
function schemaOf(s: JsonSchema | boolean | undefined): JsonSchema {
  return typeof s === 'object' ? s : {};
}

function typeText(s: JsonSchema): string {
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.anyOf) return s.anyOf.map((variant) => typeText(schemaOf(variant))).join(' \\| ');
  const types = Array.isArray(s.type) ? s.type : s.type !== undefined ? [s.type] : [];
  if (types.length === 0) return 'any';
  return types
    .map((type) => {
      if (type === 'array') return `${Array.isArray(s.items) || s.items === undefined ? 'any' : typeText(schemaOf(s.items))}[]`;
      if (type === 'object' && typeof s.additionalProperties === 'object' && !s.properties)
        return `{string: ${typeText(s.additionalProperties)}}`;
      return type;
    })
    .join(' \\| ');
}

function cell(text: string | undefined): string {
  return (text ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** A table of an object schema's fields, nested objects of arrays flattened as `field[].sub`. */
function fieldRows(s: JsonSchema, prefix = ''): string[] {
  const rows: string[] = [];
  for (const [name, value] of Object.entries(s.properties ?? {})) {
    const field = schemaOf(value);
    const required = s.required?.includes(name) ? 'yes' : 'no';
    rows.push(`| \`${prefix}${name}\` | ${typeText(field)} | ${required} | ${cell(field.description)} |`);
    const items = Array.isArray(field.items) ? undefined : schemaOf(field.items);
    if (items?.properties) rows.push(...fieldRows(items, `${prefix}${name}[].`));
  }
  return rows;
}

function fieldTable(s: JsonSchema): string {
  const rows = fieldRows(s);
  if (rows.length === 0) return '(no fields)\n';
  return ['| field | type | required | description |', '|---|---|---|---|', ...rows, ''].join('\n');
}

function objectSection(title: string, schema: z.ZodType, skip: string[] = []): string {
  const s = jsonSchema(schema);
  const shown: JsonSchema = {
    ...s,
    properties: Object.fromEntries(Object.entries(s.properties ?? {}).filter(([name]) => !skip.includes(name))),
  };
  return `${title}\n\n${s.description ? `${s.description}\n\n` : ''}${fieldTable(shown)}`;
}

function replySection(reply: z.ZodType | undefined): string {
  if (!reply) return '';
  const s = jsonSchema(reply);
  const variants = s.anyOf?.map(schemaOf) ?? [s];
  return variants
    .map(
      (variant) =>
        `Reply${variants.length > 1 ? ` (${cell(variant.description)})` : variant.description ? `: ${variant.description}` : ''}\n\n${fieldTable(variant)}`,
    )
    .join('\n');
}

export function protocolDoc(): string {
  const parts: string[] = [
    '# The control protocol',
    '',
    `<!-- Generated from src/protocol by \`${REFRESH_COMMAND}\`; edit the schemas, not this file. -->`,
    '',
    'A hall listens on the UNIX socket `.raider-hall.socket` (mode 0600) in its directory. A client writes one JSON object per line;',
    'the hall answers every command with one line of JSON with sorted keys, in the order the commands came. A frame or payload the',
    'hall cannot take is answered `{"error": TEXT}` and the connection stays open; fields a command does not know are ignored.',
    '',
    objectSection('## Frames', Frame),
    `A \`command\` frame's payload names its command in \`cmd\`; a \`subscribe\` frame's payload is:\n`,
    fieldTable(jsonSchema(SubscribePayload)),
    objectSection('## Error replies', ErrorReply),
    '## Commands',
    '',
  ];
  const replies = new Map<string, z.ZodType>(Object.entries(COMMAND_REPLIES));
  for (const [cmd, payload] of Object.entries(COMMAND_PAYLOADS)) {
    parts.push(objectSection(`### \`${cmd}\``, payload, ['cmd']), replySection(replies.get(cmd)));
  }
  parts.push('## Events', '', 'Every event carries the envelope:', '', fieldTable(jsonSchema(EnvelopeFields)));
  for (const event of BUS_EVENTS) {
    const s = jsonSchema(event);
    parts.push(objectSection(`### \`${String(schemaOf(s.properties?.type).const)}\``, event, ['type']));
  }
  return `${parts
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(PROTOCOL_DOC, protocolDoc());
  process.stdout.write(`wrote ${path.relative(process.cwd(), PROTOCOL_DOC)}\n`);
}
