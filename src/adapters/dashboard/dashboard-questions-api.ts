/**
 * The dashboard's routes for permission questions (`dashboard.questions:
 * true`): `GET /api/questions` lists the open ones, `POST
 * /api/questions/ID/answer` with `{"answer": "once"|"session"|"no"}` answers
 * one (ID is `RUN:QUESTION`, as listed). Each answer is published first as
 * `dashboard.answer` with `source: "dashboard"`; the first answer from any
 * face wins, a later one is refused (409) as already answered.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { HallServices } from '../../ports/hall-services.js';
import { refusedWith } from '../../protocol/replies.js';
import { readJsonBody, sendJson } from './http-io.js';
import type { QuestionFaces } from '../../ports/question-desk.js';

const ANSWER = /^\/api\/questions\/([^/]+)\/answer$/;
const answerBodySchema = z.object({ answer: z.enum(['once', 'session', 'no']) });
const OFF = 'permission questions do not come to the dashboard: set dashboard.questions: true in .raider-hall.yml';

/** Answers `GET /api/questions`; false for any other route. */
export function serveQuestionsRead(desk: QuestionFaces | null, res: ServerResponse, url: URL): boolean {
  if (url.pathname !== '/api/questions') return false;
  sendJson(res, 200, { enabled: desk !== null, questions: desk?.list() ?? [] });
  return true;
}

/** Carries out `POST /api/questions/ID/answer` (already checked); false when no route matches. */
export async function serveQuestionChange(
  services: HallServices,
  desk: QuestionFaces | null,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  const route = ANSWER.exec(url.pathname);
  if (!route) return false;
  if (desk === null) {
    sendJson(res, 404, { error: OFF });
    return true;
  }
  const body = await readJsonBody(req);
  const parsed = body.ok ? answerBodySchema.safeParse(body.value) : null;
  if (!body.ok || !parsed?.success) {
    sendJson(res, 400, { error: `an answer takes {"answer": "once"|"session"|"no"}${body.ok ? '' : `: ${body.error}`}` });
    return true;
  }
  const key = decodeURIComponent(route[1] ?? '');
  const colon = key.indexOf(':');
  if (colon <= 0) {
    sendJson(res, 404, {
      error: `no open question ${key}: its id is RUN:QUESTION, as GET /api/questions lists it`,
      code: 'question_not_open',
    });
    return true;
  }
  const run = key.slice(0, colon);
  const question = key.slice(colon + 1);
  services.publish({ type: 'dashboard.answer', source: 'dashboard', id: run, question, answer: parsed.data.answer });
  const result = desk.answer(run, question, parsed.data.answer, 'dashboard');
  sendJson(res, 'error' in result ? (refusedWith(result, 'question_answered') ? 409 : 404) : 200, result);
  return true;
}
