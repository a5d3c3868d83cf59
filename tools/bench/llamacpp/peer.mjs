// llama.cpp's side of tools/bench/llamacpp_bench.py, through node-llama-cpp's prebuilt CPU binaries (the ggml
// CPU backend llama.cpp picks for this CPU at run time). One JSON line on stdout:
//   node peer.mjs MODEL.gguf THREADS IDS.json NEW_TOKENS REPEAT WARMUP
// Each iteration: a fresh sequence, the prompt's ids in one batch with the last position's logits and its greedy
// token (prefill_ms), then NEW_TOKENS steps, each decoding the token chosen before and choosing the next from its
// logits, greedily (per_token_ms: their mean) — as attnlens-cli bench generates (the logits are asked for: without
// them llama.cpp skips the final norm and the LM head, a quarter of the weights). Medians over REPEAT iterations.
import fs from "node:fs";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [modelPath, threadsArg, idsFile, newArg, repeatArg, warmupArg] = process.argv.slice(2);
const [threads, newTokens, repeat, warmup] = [threadsArg, newArg, repeatArg, warmupArg].map(Number);
const ids = JSON.parse(fs.readFileSync(idsFile, "utf8"));
const log = [];
const llama = await getLlama({
    gpu: false, build: "never", logLevel: LlamaLogLevel.debug,
    logger: (level, message) => { if (/load_backend|system_info|CPU :/.test(message)) log.push(message.trim()); },
});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const context = await model.createContext({
    contextSize: ids.length + newTokens + 16, threads, batchSize: 512, sequences: 1,
});
const sequence = context.getSequence();
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const prefill = [], perToken = [];
const greedy = {generateNext: {token: true, options: {temperature: 0}}};
const nextOf = (results) => results[results.length - 1].next.token;
for (let i = 0; i < warmup + repeat; ++i) {
    await sequence.clearHistory();
    const start = performance.now();
    let token = nextOf(await sequence.controlledEvaluate([...ids.slice(0, -1), [ids[ids.length - 1], greedy]]));
    const prompt = performance.now() - start;
    const stepStart = performance.now();
    for (let k = 0; k < newTokens; ++k) token = nextOf(await sequence.controlledEvaluate([[token, greedy]]));
    if (i >= warmup) {
        prefill.push(prompt);
        perToken.push((performance.now() - stepStart) / newTokens);
    }
}
console.log(JSON.stringify({
    prefill_ms: median(prefill), per_token_ms: median(perToken), threads, tokens: ids.length,
    new_tokens: newTokens, repeat, backend: log.filter((l) => /load_backend/.test(l)).join("; "),
}));
await context.dispose();
await model.dispose();
await llama.dispose();
