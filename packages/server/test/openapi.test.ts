// The OpenAPI document of the API (`OpenApi.fromApi(LashApi)`, what `/v1/openapi.json`
// serves) validates as OpenAPI 3.x with a real validator, and names every route of issue 19.
import { OpenApi } from "@effect/platform";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { LashApi } from "../src/api.ts";
import { checkOpenApi, type Doc } from "./openapi-check.ts";

describe("OpenAPI", () => {
  it("OpenApi.fromApi(LashApi) validates as OpenAPI 3.x and names every route of the issue", async () => {
    await checkOpenApi(OpenApi.fromApi(LashApi));
  });

  it("the validator rejects a broken document (the check can fail)", async () => {
    const doc = structuredClone(OpenApi.fromApi(LashApi)) as unknown as Doc;
    (doc.paths["/v1/runs/{id}"] as Record<string, unknown>).get = { responses: "nope" };
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.valid).toBe(false);
  });
});
