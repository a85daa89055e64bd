/**
 * An ACP agent's tool call content as a run's events keep it, so the ACP face
 * can give an editor what the agent gave (docs/agents.md, "How a run maps to
 * ACP"): its text blocks and its diffs (`acp_content`), and the places the
 * call touches (`locations`). Terminals are left out: the terminal belongs to
 * the bridge's connection, no editor could show it.
 */
import { z } from 'zod';

const TextBlock = z.object({ type: z.literal('content'), content: z.object({ type: z.literal('text'), text: z.string() }) });
const DiffBlock = z.object({ type: z.literal('diff'), path: z.string(), oldText: z.string().nullish(), newText: z.string() });

const ToolBlock = z.union([TextBlock, DiffBlock]);
export const AcpToolContent = z.array(ToolBlock);
export type AcpToolContent = z.infer<typeof AcpToolContent>;

export const AcpToolLocations = z.array(z.object({ path: z.string(), line: z.number().int().nonnegative().nullish() }));
export type AcpToolLocations = z.infer<typeof AcpToolLocations>;

/** Past this much JSON a call's content stays out of the events (a diff holds whole files): readers get its text. */
const MAX_ACP_CONTENT_BYTES = 256 * 1024;

/**
 * The blocks of an agent's tool call content worth keeping as they are: its
 * text and diffs, when there is a diff among them (text alone is the event's
 * `content` already) and they are not too big; undefined otherwise.
 */
export function keptToolContent(blocks: readonly unknown[] | null | undefined): AcpToolContent | undefined {
  const kept = (blocks ?? []).flatMap((block) => {
    const parsed = ToolBlock.safeParse(block);
    return parsed.success ? [parsed.data] : [];
  });
  if (!kept.some((block) => block.type === 'diff')) return undefined;
  return new TextEncoder().encode(JSON.stringify(kept)).length <= MAX_ACP_CONTENT_BYTES ? kept : undefined;
}

/** The places a tool call touches, as an agent named them; undefined when it named none. */
export function keptLocations(locations: unknown): AcpToolLocations | undefined {
  const parsed = AcpToolLocations.safeParse(locations ?? []);
  return parsed.success && parsed.data.length > 0 ? parsed.data : undefined;
}
