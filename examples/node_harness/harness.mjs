#!/usr/bin/env node
// A stand-in LLM harness in JavaScript speaking contextos-lab.harness/1 (no dependencies).
//
//   node harness.mjs --surfaces   -> {"version", "max_concurrency", "persistent", "surfaces"}
//   node harness.mjs < request    -> one JSON result line per case, as each case finishes
//   node harness.mjs --persistent -> one request per stdin line, each answered by its result
//                                    lines then {"batch_done": n}; exits when stdin closes
//   (--time-scale=0.1 shrinks the sleeps; --case-ms=N sleeps N ms per case instead)
//
// request = {"protocol", "config", "cases": [inputs only], "seeds"?: [int per case],
//            "max_concurrency"?: m, "case_timeout_s"?: t}
// Same model as examples/standin_llm: log-normal latency (slept, so concurrency matters),
// token counts, and a correct answer with a config-dependent probability, seeded per case.

const VERSION = "1.0";
const MAX_CONCURRENCY = 8; // cases this process runs at once (async sleeps)
const MEDIAN_S = { small: 0.15, medium: 0.3, large: 0.6 };
const BASE_ACCURACY = { small: 0.55, medium: 0.72, large: 0.85 };
const OUTPUT_TOKENS = { small: 20, medium: 40, large: 120 };
// `--time-scale=0.1` shrinks the sleeps (demos and tests); 1 = realistic latency
const scaleArg = process.argv.find((a) => a.startsWith("--time-scale="));
const TIME_SCALE = scaleArg ? Number(scaleArg.split("=")[1]) : 1;
// `--persistent` declares the long-lived mode (start-up paid once per worker, not per chunk)
const PERSISTENT = process.argv.includes("--persistent");
// `--case-ms=N` replaces the modelled sleep by N ms per case (a fast harness, for benchmarks)
const caseMsArg = process.argv.find((a) => a.startsWith("--case-ms="));
const CASE_MS = caseMsArg ? Number(caseMsArg.split("=")[1]) : null;

const SURFACES = [
  { name: "model", layer: "planner", kind: "categorical", choices: ["small", "medium", "large"],
    baseline: "medium", change_class: "control_flow" },
  { name: "few_shot", layer: "prompt", kind: "int", low: 0, high: 8, step: 1, baseline: 2,
    change_class: "additive" },
  { name: "temperature", layer: "planner", kind: "float", low: 0.0, high: 1.0, step: 0.1,
    baseline: 0.7, change_class: "control_flow" },
];

// mulberry32: a tiny seeded PRNG (the kit sends one seed per case and repeat)
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gauss(rand) {
  const u = 1 - rand();
  const v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

const solve = (op, a, b) => (op === "+" ? a + b : op === "-" ? a - b : a * b);

async function runCase(c, config, seed) {
  const rand = rng(seed ?? Math.floor(Math.random() * 2 ** 32));
  const model = config.model ?? "medium";
  const fewShot = Number(config.few_shot ?? 2);
  const temperature = Number(config.temperature ?? 0.7);
  const latency = MEDIAN_S[model] * (1 + 0.03 * fewShot) * Math.exp(0.45 * gauss(rand));
  const sleepMs = CASE_MS ?? latency * 1000 * TIME_SCALE;
  if (sleepMs > 0) await new Promise((resolve) => setTimeout(resolve, sleepMs));
  const difficulty = Number(c.difficulty ?? 0.5);
  let p = BASE_ACCURACY[model] + 0.025 * fewShot - (0.25 + 0.2 * temperature) * difficulty;
  p = Math.min(0.98, Math.max(0.02, p));
  const truth = solve(c.op, Number(c.a), Number(c.b));
  const slips = [-10, -2, -1, 1, 2, 10];
  const answer = rand() < p ? truth : truth + slips[Math.floor(rand() * slips.length)];
  const tokensIn = 80 + 45 * fewShot + Math.floor(String(c.question ?? "").length / 4);
  const tokensOut = Math.max(1, Math.floor(OUTPUT_TOKENS[model] * Math.exp(0.3 * gauss(rand))));
  return {
    case_id: c.case_id,
    decision: String(answer),
    output_text: `The answer is ${answer}.`,
    tokens: tokensIn + tokensOut,
    tokens_out: tokensOut,
    latency_ms: Math.round(latency * 1e6) / 1e3,
  };
}

// One request: run its cases MAX_CONCURRENCY at a time, one result line per case as it ends.
async function answer(request) {
  const cases = request.cases;
  const seeds = request.seeds ?? [];
  const limit = Math.max(1, Math.min(request.max_concurrency ?? MAX_CONCURRENCY, MAX_CONCURRENCY));
  let next = 0;
  async function worker() {
    while (next < cases.length) {
      const i = next++;
      let result;
      try {
        result = await runCase(cases[i], request.config ?? {}, seeds[i]);
      } catch (err) {
        // an errored case: no latency, no cost (the kit counts it as failed, never as fast)
        result = { case_id: cases[i].case_id, decision: "", output_text: "", tokens: 0,
          latency_ms: null, error: `${err.name}: ${err.message}` };
      }
      process.stdout.write(JSON.stringify(result) + "\n");
    }
  }
  await Promise.all(Array.from({ length: limit }, worker));
}

// Persistent mode: one request per stdin line, each answered then closed by {"batch_done": n}.
async function serve() {
  const { createInterface } = await import("node:readline");
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const request = JSON.parse(line);
    await answer(request);
    process.stdout.write(JSON.stringify({ batch_done: request.batch }) + "\n");
  }
}

async function main() {
  if (process.argv.includes("--surfaces")) {
    process.stdout.write(
      JSON.stringify({ version: VERSION, max_concurrency: MAX_CONCURRENCY, persistent: PERSISTENT,
        surfaces: SURFACES }),
    );
    return;
  }
  if (PERSISTENT) return serve();
  let input = "";
  for await (const chunk of process.stdin) input += chunk;
  await answer(JSON.parse(input));
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
