// Writes agent-spec.schema.json (the JSON Schema of AgentSpec, for editors); a test checks it is current.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentSpecJsonSchema } from "../src/spec.ts";

writeFileSync(
  join(import.meta.dirname, "..", "agent-spec.schema.json"),
  `${JSON.stringify(agentSpecJsonSchema(), null, 2)}\n`,
);
