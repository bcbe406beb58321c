export const VERSION = "0.1.0";

const MAIN = `lash ${VERSION} — a terminal agent on a durable session graph

Usage
  lash [options] [prompt]            interactive session (the prompt is sent first)
  lash -p [options] [prompt]         one-shot: run one turn and print the answer
                                     (the prompt may come on stdin: echo hi | lash -p)
  lash sessions list|show <id>|rm <id>|abandon <id>|gc
  lash config                        the effective config (secrets redacted)
  lash doctor [--repair]             check Node, database, provider keys, MCP servers, sandbox
  lash demo                          a scripted session against a built-in mock model (no key needed)
  lash lashlang run <file|-> | repl  run Lashlang cells (lash help lashlang)
  lash export <session|last> [--format html|json|md] [-o file]
  lash import <file.json>            recreate a session from a JSON export
  lash trace view <file.jsonl> [-o out.html]
  lash policy explain <tool> [args-json] [--agent <name>]
                                     how the tool policy decides a call (lash help policy)
  lash init                          scaffold a project: lash.yaml, agents/hello.agent.md, a skill
  lash build [--json] [--check-mcp]  check the project's agents and write .lash/build/<hash>.json
  lash run [<agent> [input]]         run an agent of the newest build (no agent: the project's entry)
  lash agents list|show <name>       the agents of the newest build (lash help build)
  lash skills list|validate [dir]|add <dir>
                                     SKILL.md skills the sessions can load (lash help skills)
  lash remote --server <url> -p [prompt]
                                     one-shot against a \`lash serve\` daemon (lash help remote)
  lash serve [--port n] [--host h]    run the HTTP daemon: sessions, turns, event streams (lash help serve)
  lash loop list|firings|trigger|pause|resume [<name>]
                                     the scheduled agents of a \`lash serve\` daemon (lash help loop)
  lash login codex [--device-code]   sign in with a ChatGPT plan (for codex/… models)
  lash logout [codex]                forget that sign-in
  lash help [command]

Model and behaviour
  -m, --model <provider/model>  anthropic/…, openai/…, google/…, openai-compatible/…,
                                codex/… (ChatGPT plan: lash login codex), bedrock/…, vertex-anthropic/…
      --base-url <url>          base URL for the model's provider (Ollama, llama.cpp, vLLM, a proxy)
      --mode standard|rlm       execution mode of new sessions (default standard)
      --rlm-var <name>=<json>   (repeatable; RLM mode) a read-only value in every Lashlang cell,
                                listed in the prompt beside \`history\`: JSON (e.g. limit=10,
                                input='{"path":"src"}'); <name>=@<file> binds the file's text
      --rlm-vars-file <file>    (RLM mode) a JSON object of such values (--rlm-var wins)
      --max-turns <n>           model calls per turn before the final notice (default 50)
      --context-window <n>      the model's context window in tokens (local models the catalog
                                does not know); sessions compact at 80 % of it (config compaction)
      --system <text>           replace the system prompt
      --append-system <text>    append to the system prompt
      --no-project-instructions leave AGENTS.md / CLAUDE.md (workspace up to the git root)
                                out of the system prompt (config projectInstructions: false)
      --tools <a,b,…>           allow only these tools (read_file, write_file, edit, apply_patch,
                                glob, grep, shell, update_plan, read_artifact, spawn_agent,
                                mcp__<server>__<tool>; llm_query, a tool-less sub-query to the
                                model, is on only when named here)
      --cwd <dir>               workspace directory (default: the current directory)
      --trace <file.jsonl>      append a JSONL trace of every turn (\`lash trace view\` renders it)
      --trace-level standard|extended
                                what the trace keeps: standard (default) records the turn's shape,
                                extended adds what the model said, request bodies and tool contents
                                (config trace.level)
      --request-timeout <s>     a model request with no data for this long fails and is retried
                                (default 120; config requestTimeoutMs)
      --request-deadline <s>    total time of one model call, retries and waits included
                                (default 600; config requestDeadlineMs)

Sessions (stored in $LASH_HOME/lash.db, default ~/.lash)
  -c, --continue                continue the latest session of this directory
  -r, --resume [id|name]        resume a session (a picker without an argument, interactive only)
      --session <id>            same as --resume <id>
      --fork <id> [--at <node>] continue a copy of a session (from a node of its path)
      --no-session              keep nothing: an in-memory session (with -p)
      --wait                    another lash process is writing the session: wait for it
                                (default: fail at once, naming that process)
      --resume-pending          -p: finish the session's cut-off turn (crash, kill) before the
                                prompt; without it -p refuses to run on such a session
      --store <url>             where sessions live: postgres://user:password@host:5432/db (one
                                Postgres database several lash processes share) or sqlite (the
                                default file); overrides config store
  A cut-off turn is offered (interactive) or needs --resume-pending (-p); \`lash sessions abandon\`
  drops it. A turn whose resume crashed lash 3 times is not resumed again.

Print mode
  -p, --print                   no TUI; the final answer on stdout, progress on stderr
      --output-format <f>       text (default) | json (one result object)
                                | stream-json (JSONL: {"v":1,"type":…} per event, then the result)

Approvals (when the policy asks before a tool call runs)
      --approval-mode <m>       approve-all: run every call asked about · reject-all: deny them (the
                                model reads why) · fail: stop the turn with an error, exit 1 (the
                                default with -p; the request is kept: --resume <id> --resume-pending
                                with an answering mode resolves it) · interactive: prompt in the
                                TUI (its default; not with -p)
      --dry-run                 tools that write or run commands do not run: each returns "Dry run:
                                not run. It would have: …" with its diff or command (config
                                policy.writes "stub" does the same); read-only tools run as usual

Other
  -h, --help                    this help
  -v, --version                 the version

Environment
  ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY / GOOGLE_API_KEY, OPENAI_COMPATIBLE_BASE_URL
  (+ OPENAI_COMPATIBLE_API_KEY), *_BASE_URL per provider, LASH_HOME, LASH_MODEL.
  Claude on Bedrock: AWS_BEARER_TOKEN_BEDROCK or AWS credentials (AWS_ACCESS_KEY_ID …, AWS_PROFILE),
  AWS_REGION. Claude on Vertex: Google Application Default Credentials (or
  ANTHROPIC_VERTEX_ACCESS_TOKEN), ANTHROPIC_VERTEX_PROJECT_ID, CLOUD_ML_REGION (default global).
  Codex: the sign-in in $LASH_HOME/auth.json; LASH_CODEX_AUTH_URL overrides the authorization server.
  OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT, _HEADERS, _PROTOCOL (http/json, http/protobuf),
  OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none:
  OpenTelemetry export of every turn over OTLP/HTTP (they win over config trace.otlp).

Exit codes
  0 finished · 1 stopped or failed · 2 usage or configuration error · 130 interrupted (SIGINT/SIGTERM/SIGHUP)
`;

const TOPICS: Record<string, string> = {
  skills: `Usage
  lash skills list [--json] [--cwd <dir>]
      the skills sessions in this workspace can load, and where each comes from. Roots, first wins
      on a name clash: .lash/skills, .agents/skills, .claude/skills, config skills.roots, the
      project file's (lash.yaml) skills, $LASH_HOME/skills
  lash skills validate [dir] [--json] [--cwd <dir>]
      check one skill directory (with a SKILL.md), or every skill in the roots when no dir is given;
      problems as file:line:column; exit 1 on an error
  lash skills add <dir> [--cwd <dir>]
      validate a skill directory and copy it into <workspace>/.lash/skills/<name>/ (never overwrites)
A skill is a directory holding SKILL.md: YAML front matter (name = the directory's name, 1-64
lowercase letters, digits and single hyphens; description, up to 1024 characters; optional license,
compatibility, metadata, allowed-tools) and Markdown instructions. Sessions see the catalog (name and
description) and load a skill with the load_skill tool, its files with read_skill_file.
`,
  lashlang: `Usage
  lash lashlang run <file|-> [<file> …] [--cell FILE]… [--globals FILE.json] [--host FILE.json]
                    [--check strict|fallback|off|parse-only] [--snapshot-between-cells] [--json]
                    [--step-budget N] [--memory-budget MIB]
      runs Lashlang cells in order against one state ("// --- cell ---" splits a file)
  lash lashlang run --corpus cases.jsonl [--json]
      runs and judges every case of a conformance corpus
  lash lashlang repl
      reads cells from stdin
  (lash lashlang --help explains each option)
`,
  sessions: `Usage
  lash sessions list [--all] [--cwd <dir>] [-n <limit>] [--json]
      sessions of this directory, newest first (--all: every directory)
  lash sessions show <id|name> [--json]
      the transcript of a session's active path (tool results marked cancelled/error)
  lash sessions rm <id|name>
      delete a session (forks that run through it keep their history)
  lash sessions abandon <id|name>
      close the session's cut-off turn as abandoned (shown in the transcript, never re-run),
      so the session can be used again; its completed steps are dropped
  lash sessions gc [--min-age <seconds>] [--json]
      remove stored artifacts (full tool outputs kept by the output budget) that no node of
      any session refers to on any branch; artifacts stored less than --min-age seconds ago
      are kept (default 3600: a running turn may not have committed its reference yet)
  lash sessions compare <a> <b> [--json]
      what two sessions' active paths do differently (e.g. a session and its fork): the
      common node, then the nodes only on each side (messages, compactions, approvals)
  Every sessions command takes --store <url|sqlite> (default: config \`store\`, else the SQLite
  file in $LASH_HOME), e.g. --store postgres://user@host/db for sessions kept in Postgres.
`,
  config: `Usage
  lash config [--json] [--cwd <dir>]
      the effective config: $LASH_HOME/config.json merged with <cwd>/.lash/config.json,
      the chosen model and why, the provider keys found (values never shown), MCP servers.

Config keys (unknown keys are an error)
  model, mode ("standard"|"rlm"), maxTurns, systemPrompt, appendSystemPrompt, tools [..],
  contextWindow (tokens; overrides the model catalog, --context-window wins),
  compaction { threshold? (share of the window, default 0.8), auto? (default true),
    model? (the summariser, default the session's model), strategy? ("summary" (default) |
    "handoff": standard sessions continue in a successor session whose first message is the
    summary, linked both ways; --continue picks the successor) },
  projectInstructions (default true: AGENTS.md / CLAUDE.md in the system prompt),
  skills { roots? [dirs of skill directories, relative to the workspace] },
  providers { anthropic|openai|openai-compatible|google|codex|bedrock|vertex-anthropic: { baseUrl } },
  mcpServers { <name>: { command, args, env, cwd } | { url, headers }, type?, timeoutMs?,
    startupTimeoutMs?, enabled?, trusted? } (the format Claude Desktop, Cursor and Claude Code share; type
    "streamable-http"/"streamableHttp" = "http", serverUrl = url; servers start in the background),
  trace { file?, level? ("standard"|"extended") } (level applies whenever tracing is on, --trace or file),
  trace.otlp { endpoint?, headers?, serviceName? } (OpenTelemetry export; OTEL_* variables win),
  requestTimeoutMs (idle timeout of a model request, default 120000),
  requestDeadlineMs (total time of one model call with its retries, default 600000),
  rateLimits { anthropic|openai|openai-compatible|google|codex|bedrock|vertex-anthropic: { rpm?, tpm? } } (client-side limits per
    provider key, shared by every session; without them they are learned from rate-limit headers),
  redaction { keys? [secret strings, 8+ chars], env? [variable names] } (replaced by
    [REDACTED:<name>] in tool output; the variables are also kept from tools),
  shell { passEnv? [variable names] (credentials the shell tool may see; user config only),
          maxOutputBytes? (bytes of output the shell tool keeps, default 30000) }
  policy { profile?, allow?, deny?, approval?, tools?, workspace?, limits?, redaction?, writes?,
    sandbox?, risk? } (the tool policy; the user's and the project's are separate layers:
    lash help policy),
  files { allowHardLinks? } (let the file tools open hard-linked files; default false)
  store ("sqlite" (default: $LASH_HOME/lash.db) | "postgres://user:password@host:5432/db":
    sessions in Postgres, shared by every lash process and \`lash serve\` worker using it)
API keys are read from the environment only; tools and MCP servers never receive them.
`,
  policy: `Usage
  lash policy explain <tool> [args-json] [--agent <name>] [--cwd <dir>]
      prints the policy layers in effect (the configs', the project file's from the build —
      lash.yaml / lash.json, as \`lash run\` applies it — and with --agent that agent's), the
      verdict for this call (allow / deny / ask), which layer and rule decided and why, the
      tool's effects and (when assessed) its risk.
      e.g. lash policy explain write_file '{"path": ".env", "content": "x"}' --agent reviewer

The policy (config key "policy", in $LASH_HOME/config.json and <cwd>/.lash/config.json)
  {
    "profile": "coding",              minimal | readonly | coding | full (a named base layer)
    "allow": ["group:fs", "shell"],   tool names, globs (mcp__github__*), groups; absent/[] = all
    "deny": ["group:mcp:untrusted"],  deny always wins, at every layer
    "approval": "risk",               default for tools not in "tools": never | always | risk
    "tools": { "write_file": { "approval": "always" } },   keys: names, globs or groups
    "workspace": { "denyPatterns": [".env*", "**/*.pem"] }, file tools refuse these paths
                                      (glob and grep skip them)
    "limits": { "maxOutputBytes": 65536, "maxOutputLines": 2000 },  what the model sees of a result
    "redaction": { "keys": ["DEPLOY_TOKEN"] },  names whose values are redacted: the variable's
                                      value, and KEY=value / "key": "value" in tool output
    "risk": { "threshold": "medium" },  approval "risk" asks at this risk level or above
                                      (low | medium | high; default medium)
    "secondApprover": "high"          lash serve: approving a call at or above this risk (unassessed
                                      = high) takes a principal other than the run's starter
  }
  Layers: the user's config, the project's, each one's profile (lash run adds lash.yaml's policy
  and the agent's own), then a subagent's capability.
  A tool must be in every layer's allow list; any layer's deny denies; the strictest approval
  wins (always > risk > never); a subagent can never gain a tool its parent lacks.
  Without a risk evaluator, approval "risk" asks for tools whose effects include write or exec.
  Unknown keys are errors (with a "did you mean").

Groups
  group:fs (group:fs:read read_file, glob, grep + group:fs:write write_file, edit, apply_patch),
  group:runtime (shell), group:plan (update_plan), group:agents (spawn_agent), group:mcp,
  group:mcp:<server>, and by declared effects: group:read, group:write, group:exec,
  group:network, group:secret, group:readonly (effects only read).
Profiles
  minimal   read-only file tools and the plan
  readonly  every tool whose effects are only read
  coding    file tools, shell, plan, agents; approval risk for exec tools, never for read-only ones
  full      every tool
Effects: read_file/glob/grep/update_plan/spawn_agent read; write_file/edit/apply_patch write;
  shell exec; MCP tools write unless the server is marked "trusted": true in mcpServers (then
  from their annotations: readOnlyHint → read, else write; openWorldHint → + network).
`,
  doctor: `Usage
  lash doctor [--json] [--cwd <dir>] [--repair]
      checks the Node version, the config, the database (SQLite's quick_check of every page, then
      opens it: schema version, sessions), provider keys per vendor, the chosen model, and MCP
      servers (starts each and waits up to 15 s for it), and the shell sandbox (bwrap: whether it
      can run here, or why not and the fix). Exit 0 when lash can run a turn, 1 otherwise.
      --repair  when the database is damaged: copy every readable row into a new file and swap it
                in; the damaged file is kept as lash.db.damaged-<time>. Stop other lash processes first.
`,
  login: `Usage
  lash login codex [--device-code] [--no-browser]
      signs in to Codex with your ChatGPT plan (OAuth with PKCE, as the Codex CLI does): opens the
      sign-in page in a browser and waits for it to come back to http://localhost:1455/auth/callback.
      --device-code  for machines without a browser: prints a code to enter at the sign-in page
                     on any other device, then waits until you have
      --no-browser   print the URL instead of opening a browser
      The tokens are kept in $LASH_HOME/auth.json (created with mode 0600), refreshed shortly
      before they expire (and after a 401), and never reach tools, traces, exports or logs.
      Then use a codex/… model: lash -m codex/gpt-5-codex. \`lash doctor\` shows the sign-in.
  lash logout [codex]
      forgets the sign-in (removes it from auth.json).
  A sign-in the server no longer accepts (revoked, expired) fails with "run \`lash login codex\`".
  LASH_CODEX_AUTH_URL points the sign-in at another authorization server (tests, proxies);
  LASH_CODEX_CALLBACK_PORT picks the loopback port (the server must accept that redirect URI).
`,
  build: `Usage
  lash build [dir] [--json] [--check-mcp] [--mcp-timeout <s>] [--cwd <dir>]
      parses the project (lash.yaml or lash.json, agent specs *.agent.md / *.agent in the agent
      directories and agents/*.yaml, skills) and reports every problem at once as
      file:line:column: message — unknown keys (with "did you mean"), models not in the provider
      catalog (with the closest names), unknown tools, skills and MCP servers, agent cycles,
      invalid schedules; warnings for policy grants no tool uses and skills no agent lists.
      On success writes .lash/build/<sha256>.json (the manifest \`lash run\` uses) and skills.lock.
      Same inputs give the same hash. Exit code 0 (warnings allowed), 1 on errors.
      --json            one JSON object: ok, hash, manifest, errors, warnings, diagnostics
      --check-mcp       start each MCP server of lash.yaml and list its tools (timeout: --mcp-timeout, default 10 s)
  The spec format's JSON Schema: packages/agents/agent-spec.schema.json.
`,
  run: `Usage
  lash run <agent> [input | --input-json <file>] [--manifest <hash>] [-p flags]
  lash run [input]   (no agent: the project's \`entry\` — an agent, or a function path.ts#name)
      runs the agent of the newest build in .lash/build (or --manifest <hash>) as a -p session:
      its instructions are the system prompt, its tools the only tools (other agents it lists are
      tools named after them, each call a child session of the run), its output schema the shape
      of the answer. The input is checked against the agent's input schema (JSON when it parses).
      Every -p flag applies: --output-format text|json|stream-json, --trace, --no-session,
      --approval-mode, -m (overrides the agent's model); the run is an ordinary session
      (lash sessions list / resume / fork / export). No build: "run \`lash build\` first".
      A build that does not match its hash, or whose input files changed since, is refused
      ("run \`lash build\`"); a --manifest prefix matching several builds is an error.
      An entry function gets { input, callAgent(name, input), log } and has no model of its own.
`,
  init: `Usage
  lash init [dir]
      scaffolds a project in the directory (default: the current one): lash.yaml, an example agent
      agents/hello.agent.md, an example skill .lash/skills/greeting/SKILL.md, and .lash/build/ in
      .gitignore. Refuses to overwrite existing files (it names them) and writes nothing then.
`,
  agents: `Usage
  lash agents list [--json] [--cwd <dir>]
  lash agents show <name> [--json] [--cwd <dir>]
      the agents of the newest build in .lash/build (without one, a fresh build): name,
      description, model, mode, tools, skills, schemas and the resolved instructions.
`,
  remote: `Usage
  lash remote --server <url> [--token <t>] -p [prompt] [--continue <session>] [-m <model>]
              [--output-format text|json|stream-json] [--approval-mode fail|approve-all|reject-all]
      runs one turn on a \`lash serve\` daemon (through @lash/client): creates a session (or
      continues --continue <session id>), starts the turn and follows the run's events — after a
      dropped connection or a daemon restart it reconnects with Last-Event-ID by itself and
      misses nothing. The prompt may come on stdin.
      text: the model's text as it streams on stdout, tool lines on stderr; json: one result
      object; stream-json: a session line, one line per event (with seq and runId), a result.
      Exit code 0 when the run completed, 1 when it stopped, failed or waits on an approval,
      2 for bad arguments or a rejected token, 130 when cancelled with Ctrl-C (the first
      Ctrl-C cancels the run on the daemon).
      --approval-mode   what to do when the run waits on an approval: fail (default) exits 1
                        naming the approval id and how to decide it (it stays pending on the
                        daemon); approve-all / reject-all decide it through the API
      --server          the daemon's URL (default $LASH_SERVER_URL)
      --token           a bearer token from \`lash serve token create\` (default $LASH_SERVER_TOKEN)
  lash remote approvals --server <url>
      the pending approvals the token may see
  lash remote approve <id> | deny <id> [--reason <text>] --server <url>
      decide one (the denial reason reaches the model)
`,
  demo: `Usage
  lash demo [--keep] [--json]
      runs a scripted session against lash's built-in mock model server: streamed text, real tool
      calls (write a file, read it back, run a shell command) in a temporary workspace, persistence,
      resume and an HTML export. The model is scripted; nothing leaves this machine.
      --keep  store the demo sessions in $LASH_HOME/lash.db instead of a temporary directory
`,
  serve: `lash serve [options]
      runs lash as an HTTP daemon on this machine: sessions, turns (queued runs, one at a time
      per session), and each session's durable event stream over server-sent events. Runs
      survive a restart: a run cut off by a crash resumes from its journal (no completed model
      call or tool is repeated) and its stream continues with the next sequence number.
      The first stdout line is \`lash serve: listening on http://<host>:<port>\`.
      --host <addr>             address to bind (default 127.0.0.1)
      --port <n>                port (default 7777; 0 = any free port)
      --state <file>            the daemon's state db: runs and events (default $LASH_HOME/serve.db)
      --store <url>             sessions in Postgres (postgres://user:password@host:5432/db), shared
                                with other lash processes (config store); runs, events, tokens and
                                loops stay in the --state file
      --max-runs <n>            runs executing at once across sessions (default 8)
      --max-queued <n>          runs waiting in all (default 1000); beyond it a turn gets 429
      --drain-timeout <ms>      on SIGTERM/SIGINT: how long running turns may finish before the
                                daemon exits leaving them resumable (default 10000)
      --sse-buffer <n>          events buffered per event-stream reader (default 10000); a reader that
                                falls further behind is disconnected and reconnects with Last-Event-ID
      --no-auth                 every caller is the admin principal "local" (loopback hosts only)
      --engine local|restate    where runs execute (config serve.engine; default local: in this
                                process). restate (experimental; needs --store postgres://…): the
                                daemon also runs a Restate worker, each run is submitted through
                                Restate's ingress (idempotency key <session>:<run id>) and runs on
                                whichever worker Restate picks; every daemon's event streams follow
                                the store's shared turn_events log (ids = its cursor, so a client
                                reconnects to any daemon with Last-Event-ID). Cancelling a running
                                run and approvals are not built for it yet.
      --restate-ingress <url>   Restate's ingress, e.g. http://127.0.0.1:8080 (serve.restate.ingress)
      --restate-admin <url>     Restate's admin API, e.g. http://127.0.0.1:9070: the deployment is
                                registered there at start (serve.restate.admin)
      --restate-worker-port <n> this daemon's worker endpoint, HTTP/2 on 127.0.0.1 (default 9080;
                                serve.restate.workerPort)
      --restate-deployment <url>  the URL Restate reaches the workers at (a load balancer in front of
                                several daemons), registered instead of this worker's own
                                (serve.restate.deployment)
      --model, --base-url, --mode, --tools, --trace …  as for lash -p (the defaults of new sessions)
  API: GET /health, /ready, /v1/openapi.json; POST /v1/sessions, POST /v1/sessions/<id>/turns
      [?wait=true], GET /v1/sessions/<id>/events (SSE; reconnect with Last-Event-ID), GET /v1/runs/<id>,
      POST /v1/runs/<id>/cancel. SIGTERM drains: new turns get 503 (code draining).
  Agents: the workspace's newest build (lash build; restart lash serve after a new one).
      GET /v1/agents; POST /v1/agents/<name>/chat {"input": …, "sessionId"?} runs one as lash run
      does (…/chat/stream: its events); /v1/agents/<name>/mcp serves it as an MCP server
      (Streamable HTTP, one tool named after the agent with its input/output schemas).
  Loops: an agent whose spec has schedule: and instruction: is fired by the daemon (lash help loop).
      GET /v1/loops, GET /v1/loops/<name>/firings, POST /v1/loops/<name>/trigger {"instruction"?},
      POST /v1/loops/<name>/pause | resume.
  Triggers: what an RLM session registers (\`await triggers.register({ source: cron.Schedule(…),
      target, inputs })\`) is fired by the daemon: each firing is a run of that session that starts
      the target process (no model call), claimed once in the --state file.
  Console: open http://<host>:<port>/ in a browser: the agents and a chat with each, the live
      events of any run, the approvals inbox, sessions as a tree (fork, compare), loops, per-agent
      metrics, trace and export views (the token, when the daemon wants one, is asked once per tab).
`,
  loop: `Usage
  lash loop list [--json]
      the loops of a \`lash serve\` daemon: schedule, active or paused, next and last firing
  lash loop firings <name> [--limit n] [--json]
      its firings, newest first: key (<loop>@<scheduled time>), kind (schedule, missed, manual),
      state (queued, running, completed, failed, timeout, skipped), attempts, session and run
  lash loop trigger <name> [--instruction <text>] [--json]
      a manual firing now (its own key); --instruction replaces the spec's for this firing
  lash loop pause <name> | resume <name>
      stop / restart its scheduled firings (kept across daemon restarts; trigger still works;
      firings due while paused are not run later)
      --server          the daemon's URL (default $LASH_SERVER_URL)
      --token           a bearer token from \`lash serve token create\` (default $LASH_SERVER_TOKEN)
  A loop is an agent spec with schedule: (a cron string, { cron, tz } or { every: 15m }) and
  instruction: (what each firing sends); optional missed: run|skip (firings due while no daemon
  ran: run each once at start, default, or record them skipped), concurrency: n (default 1),
  timeout: 10m (the run is cancelled, the firing recorded timeout), retry: { attempts: 3,
  backoff: 30s } (doubled per attempt). Each firing runs once even with two daemons on one
  state db: its key is claimed in the db. Its run is an ordinary session of the agent
  (title: the firing key; owner loop:<name>, seen by admin tokens; a triggered firing's
  session is the caller's).
`,
};

export function helpText(topic?: string): string {
  if (topic === undefined) return MAIN;
  return TOPICS[topic] ?? MAIN;
}
