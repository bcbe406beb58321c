// The Effect client: `HttpApiClient.make(LashApi)` with the bearer token on every request.
// Its methods are the API's endpoints by group (`client.sessions.create({ payload })`,
// `client.runs.get({ path: { id } })`, `client.health()`), failing with the API's tagged
// errors (`catchTag("NotFound", …)`). Event streams are `Stream`s over the reconnecting
// iterator of `./events.ts`.
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform";
import { LashApi, type ServerEvent } from "@lash/server/api";
import { Context, Effect, Layer, Stream } from "effect";
import { ClientError, describe } from "./errors.ts";
import { type Connection, type EventsOptions, type StreamTarget, streamEvents, trimBase } from "./events.ts";

export interface ClientOptions {
  /** e.g. `http://127.0.0.1:7777` (no `/v1`). */
  readonly baseUrl: string;
  /** A bearer token from `lash serve token create`. */
  readonly token?: string | undefined;
}

/** `HttpApiClient.make(LashApi)` with the token; needs an `HttpClient` (e.g. `FetchHttpClient.layer`). */
export const makeApiClient = (options: ClientOptions) =>
  HttpApiClient.make(LashApi, {
    baseUrl: trimBase(options.baseUrl),
    transformClient: (client) =>
      options.token === undefined
        ? client
        : client.pipe(HttpClient.mapRequest(HttpClientRequest.bearerToken(options.token))),
  });

/** The typed client of every endpoint. */
export type ApiClient = Effect.Effect.Success<ReturnType<typeof makeApiClient>>;

/** A session's or a run's events as a `Stream` that reconnects by itself (see `streamEvents`). */
export const eventStream = (
  connection: Connection,
  target: StreamTarget,
  options: Omit<EventsOptions, "signal"> = {},
): Stream.Stream<ServerEvent, ClientError | Error> =>
  Stream.fromAsyncIterable(streamEvents(connection, target, options), (cause) =>
    cause instanceof Error
      ? cause
      : new ClientError({ code: "unexpected_response", message: describe(cause) }),
  );

/** The client as a service: its endpoints, and its event streams. */
export class LashClient extends Context.Tag("@lash/client/LashClient")<
  LashClient,
  {
    readonly api: ApiClient;
    readonly events: (
      target: StreamTarget,
      options?: Omit<EventsOptions, "signal">,
    ) => Stream.Stream<ServerEvent, ClientError | Error>;
  }
>() {
  /** The client over `fetch`. */
  static readonly layer = (options: ClientOptions): Layer.Layer<LashClient> =>
    Layer.effect(
      LashClient,
      Effect.map(makeApiClient(options), (api) => ({
        api,
        events: (target: StreamTarget, eventOptions?: Omit<EventsOptions, "signal">) =>
          eventStream(options, target, eventOptions),
      })),
    ).pipe(Layer.provide(FetchHttpClient.layer));
}
