// vitest setup file: each test file's temporary roots go when the file is done.
import { afterAll } from 'vitest';
import { removeTempRoots } from './temp-roots.js';

afterAll(() => removeTempRoots());
