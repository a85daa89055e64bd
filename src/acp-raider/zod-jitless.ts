/**
 * Zod without its generated parsers, for the bridge: zod compiles (`new
 * Function`) an object schema's parser on its first parse, and a bridge, a
 * process of one run, parses most of the ACP SDK's schemas once or a few
 * times: the compiles cost more than they save, on the run's way to its first
 * update and to its end (bench/acp-agents.ts). Imported first, as the
 * setting holds for the schemas made after it.
 */
import { z } from 'zod';

z.config({ jitless: true });
