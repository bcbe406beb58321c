// PostgresStore against a real Postgres 15 (started for this file): the shared
// store conformance suite, migrations, and two stores ("workers") on one database.
import { afterAll, beforeAll, describe } from "@effect/vitest";
import { Effect } from "effect";
import { storeConformance } from "../../core/test/store/conformance.ts";
import { makePostgresStore } from "../src/index.ts";
import { postgresUnavailable, startPostgres, type TestPostgres } from "../src/testing.ts";

if (postgresUnavailable) console.warn(postgresUnavailable);

let pg: TestPostgres | undefined;

beforeAll(async () => {
  if (!postgresUnavailable) pg = await startPostgres();
}, 120_000);

afterAll(() => pg?.stop());

describe.skipIf(postgresUnavailable !== undefined)("PostgresStore", () => {
  storeConformance("PostgresStore", () =>
    Effect.suspend(() => makePostgresStore({ url: pg!.createDatabase(), maxConnections: 4 })),
  );
});
