/** A background run was cancelled while its turn ran: the turn stops, storing nothing more. */
export class RunCancelled extends Error {
  constructor(runId: string) {
    super(`The run ${runId} was cancelled.`);
    this.name = 'RunCancelled';
  }
}
