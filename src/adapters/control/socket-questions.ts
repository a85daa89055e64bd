/**
 * The socket as a face of permission questions (`questions: { socket: true }`,
 * README.md): runs that no editor watches get a permission channel
 * even with no dashboard or Telegram chat to ask, and the socket's `answer`
 * (`raider hall answer`) answers them. Like every face, it opens the hall's
 * one question desk, so the first answer of any face wins.
 */
import type { HallAdapter, HallAdapterFactory, HallServices } from '../../ports/hall-services.js';
import type { CommandHandlers } from '../../protocol/command-service.js';
import { socketAnswer } from '../dashboard/question-desk.js';

export const socketQuestionsAdapter: HallAdapterFactory = (services) =>
  services.config.questions.socket ? new SocketQuestions(services) : null;

class SocketQuestions implements HallAdapter {
  readonly name = 'questions';
  readonly commands: Readonly<Partial<CommandHandlers>>;

  constructor(private readonly services: HallServices) {
    this.commands = socketAnswer(services.questions);
  }

  async start(): Promise<void> {
    // Every run: those an ACP client watches are asked here too, and the first answer wins.
    this.services.questions.openFace('socket', () => true);
  }

  async stop(): Promise<void> {
    this.services.questions.closeFace('socket');
  }
}
