export { submitTurn, TurnInvocationError } from "./ingress.ts";
export { RestateJournal } from "./journal.ts";
export {
  freePort,
  type RestateServer,
  type RestateServerOptions,
  restateServerBinary,
  startRestateServer,
} from "./server.ts";
export {
  idempotencyKey,
  type Pin,
  pinnedStore,
  type RestateWorker,
  type RestateWorkerOptions,
  registerDeployment,
  SESSION_OBJECT,
  sessionObject,
  startRestateWorker,
  type TurnReply,
  type TurnRequest,
} from "./worker.ts";
