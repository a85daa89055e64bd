/** Where the fault tests' raider lives (see its header for the missions it understands). */
import { fileURLToPath } from 'node:url';

export const ODD_RAIDER = fileURLToPath(new URL('./odd-raider.mjs', import.meta.url));
