// The `--help` texts of every attnlens-cli subcommand (main.cpp prints them under the usage line): one line
// per option of the registered usage and per positional argument, then examples. They are kept in one place
// so that each option's description sits beside the others' and the same option reads alike everywhere; the
// defaults and ranges are those of the parsing code in cli_<name>.cpp.

#include "cli_common.h"

#include <map>
#include <string>

namespace cli {

namespace {

CommandHelp attentionHelp() {
    return {
        {
            {"--input IN.json", "the input (required): \"query\", \"key\", \"value\" as rows; optional "
                                "\"mask\" (1 keep, 0 mask) and \"heads\""},
            {"--json OUT", "write the stages (scores, scaled, masked, weights, output, concat) there, not "
                           "to stdout"},
        },
        {
            "attnlens-cli attention --input qkv.json",
            "attnlens-cli attention --input qkv.json --json stages.json",
        }};
}

CommandHelp benchHelp() {
    return {
        {
            {"--model DIR", "the model (default: marian-de-en-tiny, vit-fashion-mnist, llama-en-tiny, "
                            "ddpm-fashion-tiny by task)"},
            {"--image IMG", "time one ViT run on this picture: decode, preprocess, forward with every "
                            "head, top-5"},
            {"--src TEXT", "time translating this German sentence with Marian, every head captured"},
            {"--new-tokens N", "--src: at most N new tokens, 1..100000 (default: 32); --text: N greedy ones, "
                               "decoder-only (default: 0)"},
            {"--beam N", "with --src: number of beams, 1..64 (default: 1, greedy)"},
            {"--text TEXT",
             "time one text-model forward (BERT, GPT-2, Llama-style) over this text, every head kept "
             "(captured, or above 1 GiB on demand: attention_mb, head_map_ms for one head's map)"},
            {"--sample X.npy", "time one U-Net forward on this sample [1, C, H, W]; a diffusers --model "
                               "alone: seeded noise"},
            {"--timestep T", "with --sample: the timestep, 0..(the scheduler's timesteps − 1) (default: "
                             "500)"},
            {"--class C", "with --sample: class number from 0, class-conditional models only (default: 0)"},
            {"--repeat N", "timed runs, 1..10000; median, min and max are reported (default: 5)"},
            {"--warmup N", "untimed runs before them, 0..10000 (default: 1)"},
            {"--precision fp32|bf16", "format of the linear and convolution layers; bf16 adds \"parity\" "
                                      "against fp32 (default: fp32)"},
        },
        {
            "attnlens-cli bench --src \"Wie geht es dir?\" --beam 4 --repeat 10",
            "attnlens-cli bench --image sneaker_1.png --repeat 20 --warmup 2",
            "attnlens-cli bench --text \"The cat sat on the mat.\" --new-tokens 16",
            "attnlens-cli bench --sample x.npy --timestep 250 --class 7",
        }};
}

CommandHelp diffHelp() {
    return {
        {
            {"A.json B.json", "two attention exports (translate, text, vision or unet --json, a page's "
                              "export); diff = A − B"},
            {"--kind encoder|decoder|cross",
             "translations: which attention (default: cross, or the view of a Translate page export)"},
            {"--layer L|NAME", "layer from 0, or a unet export's module path, e.g. mid_block.attentions.0 "
                               "(default: the last)"},
            {"--head H|mean|max|min", "head from 0, or mean|max|min over the heads (default: mean)"},
            {"--out DIFF.png", "draw A, B and A − B side by side with the summary, as a PNG"},
            {"--json DIFF.json", "write the matched labels, A, B, A − B, max |Δ| and each row's "
                                 "Jensen–Shannon divergence"},
            {"--colormap NAME", "colour map of A, B in --out: "
                                "viridis|magma|inferno|plasma|cividis|grey|diverging (default: viridis)"},
        },
        {
            "attnlens-cli diff haus.json haeuser.json --out diff.png",
            "attnlens-cli diff haus.json haeuser.json --kind encoder --layer 0 --head 1 --json diff.json",
            "attnlens-cli diff sneaker.json bag.json --head max --colormap magma --out diff.png",
            "attnlens-cli diff t500.json t100.json --layer mid_block.attentions.0 --json diff.json",
        }};
}

CommandHelp diffuseHelp() {
    return {
        {
            {"--model DIR", "diffusers UNet2DModel or pipeline folder (default: ddpm-fashion-tiny)"},
            {"--scheduler ddim|ddpm", "the sampling loop of diffusers' DDIMPipeline or DDPMPipeline "
                                      "(required)"},
            {"--steps N", "denoising steps, 1..the scheduler's training timesteps (1000 for the built-in) "
                          "(required)"},
            {"--class C", "class number from 0 or id2label name; class-conditional models (the built-in) "
                          "need it"},
            {"--eta E", "with --scheduler ddim only: DDIM's eta, 0..1 (0: deterministic, 1: DDPM-like noise) "
                        "(default: 0)"},
            {"--seed S", "seed of the initial and every step's noise, an integer ≥ 0 (default: 0)"},
            {"--size H[,W]", "image size in pixels, 1..4096, H alone: square (default: the model's "
                             "sample_size)"},
            {"--init-noise X.npy", "the initial noise x_T, [1, C, H, W] or [C, H, W], instead of the "
                                   "seeded one"},
            {"--noise-dir D", "folder of step_000.npy, step_001.npy, …: each loop step's variance noise "
                              "(from 0)"},
            {"--out IMG.png", "write the final sample as a PNG, round(clamp(x/2 + 0.5, 0, 1)·255)"},
            {"--json OUT", "write the scheduler, steps, timesteps, class, seed and the final sample "
                           "[C][H][W]"},
            {"--overlay OUT.png", "draw where --query looks in --layer at --step, over that step's x̂0 (or "
                                  "x_t), as a PNG"},
            {"--step S", "with --overlay: loop step from 0 (default: the last)"},
            {"--gif OUT.gif", "the --overlay view at every step, as an animated GIF"},
            {"--delay MS", "with --gif: milliseconds per frame, 10..10000 (default: 100)"},
            {"--layer L|NAME", "with --overlay/--gif: attention layer from 0 in execution order, or its "
                               "module path (default: 0)"},
            {"--query ROW,COL[:ROW,COL]", "with --overlay/--gif: pixel from 0, or the region between two "
                                          "corners, inclusive (default: 0,0)"},
            {"--key-side", "with --overlay/--gif: who attends to the --query region, instead of where it "
                           "looks"},
            {"--value-weighted", "with --overlay/--gif: each weight times its key's ‖v·W_O‖, rows "
                                 "renormalised, per head before the fusion"},
            {"--head H|mean|max|min", "with --overlay/--gif: head from 0, or mean|max|min over the layer's "
                                      "heads (default: mean)"},
            {"--on x0|xt", "with --overlay/--gif: over the step's predicted clean image or its noisy input "
                           "(default: x0)"},
            {"--colormap NAME", "with --overlay/--gif: viridis|magma|inferno|plasma|cividis|grey|diverging "
                                "(default: inferno)"},
            {"--opacity A", "with --overlay/--gif: opacity of the map, 0..1 (0: image only, 1: map only) "
                            "(default: 0.6)"},
        },
        {
            "attnlens-cli diffuse --scheduler ddim --steps 50 --class 7 --seed 1 --out sneaker.png",
            "attnlens-cli diffuse --scheduler ddpm --steps 1000 --class Dress --json out.json",
            "attnlens-cli diffuse --scheduler ddim --steps 20 --class 3 --overlay map.png --step 10 "
            "--layer 2 --query 14,14",
            "attnlens-cli diffuse --scheduler ddim --steps 20 --class 8 --gif steps.gif --delay 200 "
            "--query 10,10:17,17 --key-side",
        }};
}

CommandHelp headsHelp() {
    return {
        {
            {"--model DIR", "the model (default: marian-de-en-tiny, llama-en-tiny, vit-fashion-mnist, "
                            "ddpm-fashion-tiny by input)"},
            {"--src \"Satz\"", "a German sentence for Marian, translated greedily: encoder, decoder and "
                               "cross statistics"},
            {"--src-file F",
             "a file of German sentences, one per line (blank lines skipped): statistics averaged"},
            {"--text \"text\"", "a text for a text model (BERT, GPT-2, Llama-style)"},
            {"--importance", "with --text/--text-file: each head's importance, the log-probability drop "
                             "with it alone off"},
            {"--text-file F", "texts, one per line (blank lines skipped): statistics averaged over them"},
            {"--image IMG", "a picture for a ViT model"},
            {"--image-dir D", "every picture in a folder (.png, .jpg, .jpeg, .bmp, .webp, .tif, .tiff), "
                              "averaged"},
            {"--sample X.npy", "a U-Net sample [1, C, H, W]: one forward, rows = attention layers in "
                               "execution order"},
            {"--timestep T", "with --sample: the timestep, 0..(the scheduler's timesteps − 1) (required)"},
            {"--class C", "with --sample: class number from 0 or name; class-conditional models (the "
                          "built-in) need it"},
            {"--stat entropy|distance|sink|diagonal|previous|alignment",
             "the table on stdout, layers × heads from 0; --json holds all (default: entropy)"},
            {"--align \"0-0 1-2\"",
             "with --src: Pharaoh word alignment (from 0) to its greedy translation, for --stat alignment"},
            {"--align-file A", "with --src-file: one such alignment per sentence, line by line"},
            {"--json OUT", "write every statistic per attention kind as [layer][head], null where one does "
                           "not apply"},
            {"--precision fp32|bf16", "format of the linear layers, bf16 needs oneDNN and AVX-512; not "
                                      "with --sample (default: fp32)"},
        },
        {
            "attnlens-cli heads --src \"Das Haus ist klein.\" --stat sink",
            "attnlens-cli heads --text \"The cat sat on the mat.\" --importance --json heads.json",
            "attnlens-cli heads --image-dir resources/samples/fashion-mnist --stat distance",
            "attnlens-cli heads --sample x.npy --timestep 500 --class 3 --json heads.json",
        }};
}

CommandHelp inspectHelp() {
    return {{
                {"--model DIR|FILE.gguf|ollama:NAME",
                 "the model folder to describe, Hugging Face or diffusers, or a "
                 "GGUF file (its tensor types and metadata) — an Ollama model's by "
                 "its name, e.g. ollama:qwen2.5:0.5b (required)"},
                {"--json OUT", "also write it all as JSON, with the full config and the weights' metadata"},
            },
            {
                "attnlens-cli inspect --model resources/models/marian-de-en-tiny",
                "attnlens-cli inspect --model ollama:qwen2.5:0.5b",
                "attnlens-cli inspect --model resources/models/ddpm-fashion-tiny --json info.json",
            }};
}

CommandHelp neuronHelp() {
    return {
        {
            {"--model DIR", "the model (default: marian-de-en-tiny, llama-en-tiny, vit-fashion-mnist, "
                            "ddpm-fashion-tiny by input)"},
            {"--layer L", "layer from 0; --sample: attention layer in execution order (required)"},
            {"--head H", "head from 0 (required)"},
            {"--query Q", "query token from 0; pictures also ROW,COL of a patch or pixel, a ViT also cls "
                          "(required)"},
            {"--key K|argmax", "key token as --query, or argmax: the key the query attends to most "
                               "(required)"},
            {"--json OUT", "write q, k, their products, q·k, the scale, the row's scores and the softmax "
                           "weight"},
            {"--png OUT", "draw q_i, k_i and q_i·k_i per dimension and the arithmetic, as a PNG"},
            {"--sort", "with --png: dimensions ordered by |q_i·k_i| instead of by index"},
            {"--src \"Satz\"", "a German sentence for Marian: translated greedily, then a teacher-forced "
                               "pass over it"},
            {"--kind encoder|decoder|cross", "with --src: which attention (default: cross)"},
            {"--text \"text\"", "a text for a text model (BERT, GPT-2, Llama-style)"},
            {"--image IMG", "a picture for a ViT: token 0 is CLS, patch (r, c) is 1 + r·cols + c"},
            {"--sample X.npy", "a U-Net sample [1, C, H, W]; tokens y·w + x of the layer's grid"},
            {"--timestep T", "with --sample: the timestep, 0..(the scheduler's timesteps − 1) (required)"},
            {"--class C", "with --sample: class number from 0 or name; class-conditional models (the "
                          "built-in) need it"},
        },
        {
            "attnlens-cli neuron --src \"Das Haus ist klein.\" --layer 2 --head 1 --query 1 --key argmax",
            "attnlens-cli neuron --text \"The cat sat on the mat.\" --layer 0 --head 3 --query 5 --key 2 "
            "--json neuron.json",
            "attnlens-cli neuron --image sneaker_1.png --layer 3 --head 0 --query cls --key 2,3 --png "
            "neuron.png --sort",
            "attnlens-cli neuron --sample x.npy --timestep 500 --class 3 --layer 0 --head 1 --query 7,7 "
            "--key argmax",
        }};
}

CommandHelp lensHelp() {
    return {
        {
            {"--model DIR", "a text folder with a language-model head (default: the built-in llama-en-tiny); "
                            "with --logit-lens also a Marian folder (its decoder over the greedy translation "
                            "of \"text\") or a ViT classifier (\"text\" is then the image's path)"},
            {"--logit-lens",
             "each layer's residual stream through the model's final norm and head: top tokens "
             "and the target's rank per layer"},
            {"--contrib", "the target's logit split over the embeddings, every head, o_proj's bias and every "
                          "MLP (direct logit attribution; pre-norm models)"},
            {"--kv-policy POLICY",
             "a KV-cache what-if: the prompt's greedy continuation again with the cache POLICY keeps — full, "
             "streaming:SINKS,WINDOW (StreamingLLM), h2o:BUDGET,RECENT (heavy hitters), snapkv:BUDGET,WINDOW "
             "or "
             "keep:0,2-5 (positions from 0); per step the tokens, log p of the baseline's next token, KL, "
             "the "
             "entries kept and their memory"},
            {"--generate N", "with --kv-policy: the continuation's length, 1..256 (default: 32)"},
            {"--free",
             "with --kv-policy: the policy writes its own text (default: it is fed the baseline's)"},
            {"--position P|all",
             "the token from 0; all: every position (--logit-lens) (default: the last; a translator's "
             "decoder: all)"},
            {"--target TEXT", "the token to follow, as one token of the tokenizer (\" Paris\") (default: the "
                              "model's own top token there)"},
            {"--target-id N", "the token to follow by its id (a ViT: the class, from 0)"},
            {"--top K", "with --logit-lens: the top tokens kept per layer, 1..100 (default: 5)"},
            {"--chat", "the text as one user turn of the folder's chat template"},
            {"--timing", "also time it, on stderr: the lens and a plain forward pass apart; --kv-policy: the "
                         "baseline, the same steps as a plain generation, the re-run"},
            {"--json OUT", "write the lens as JSON (fields in the header of app/cli/cli_lens.cpp)"},
            {"\"text\"", "the text, encoded by the folder's tokenizer"},
        },
        {
            "attnlens-cli lens --logit-lens \"The cat sat on the\"",
            "attnlens-cli lens --logit-lens --position all --json lens.json \"Once upon a time\"",
            "attnlens-cli lens --contrib --target \" mat\" \"The cat sat on the\"",
            "attnlens-cli lens --kv-policy streaming:4,16 --generate 24 \"Once upon a time\"",
            "attnlens-cli lens --logit-lens --model resources/models/marian-de-en-tiny \"Der Hund läuft.\"",
            "attnlens-cli lens --logit-lens --model resources/models/vit-fashion-mnist sneaker.png",
        }};
}

CommandHelp textHelp() {
    return {
        {
            {"--model DIR",
             "a BERT, GPT-2 or Llama-style folder (llama, mistral, qwen2, qwen3, gemma3_text; "
             "default: llama-en-tiny), or a pipeline's text_encoder/ (CLIP: the text padded to "
             "77 as the pipeline feeds it, the tokenizer/ beside it)"},
            {"--generate N", "decoder-only: continue greedily by up to N tokens, 0..100000 (default: 0; "
                             "without it: top 5 next)"},
            {"--temperature T", "with --generate: sample, the logits divided by T, 0..100 (default: 0 = "
                                "greedy)"},
            {"--top-k K", "with --temperature: only the K most likely tokens (default: 0 = all)"},
            {"--top-p P", "with --temperature: the smallest set reaching probability P, (0, 1] (default: 1)"},
            {"--seed S",
             "with --temperature: the generator's seed; the same seed, the same text (default: 0)"},
            {"--chat", "the text as a user turn of the folder's chat template (tokenizer_config.json), the "
                       "assistant's turn opened (instruct models)"},
            {"--logits", "with --json: add the logits [token][vocabulary] (models with a language-model "
                         "head)"},
            {"--value-weighted",
             "with --json: add \"value_weighted\" [L][H][T][T], each weight times the "
             "length of what its key sends through the head (‖v·W_Oᵀ‖), rows renormalised"},
            {"--json OUT",
             "write tokens, ids, every head's attention [L][H][T][T] (and generated ids; a CLIP "
             "text encoder's last_hidden_state [T][D]); refused above --capture-budget"},
            {"--heatmap OUT.png|svg", "draw one labelled attention matrix of the text, as PNG or SVG"},
            {"--npy OUT.npy", "write that matrix [T][T] as float32 NPY (with --heatmap or alone)"},
            {"--layer L", "with --heatmap / --npy: layer from 0 (default: the last)"},
            {"--head H|mean|max|min", "with --heatmap / --npy: head from 0, or mean|max|min over the heads "
                                      "(default: mean)"},
            {"--scale linear|log|clip",
             "with --heatmap: colours over [0, 1], by log weight, or clipped at the "
             "99th percentile (default: linear)"},
            {"--ignore-first", "with --heatmap: leave the first token (the attention sink) out, each row "
                               "renormalised over the rest"},
            {"--colormap NAME",
             "with --heatmap: viridis|magma|inferno|plasma|cividis|grey (default: viridis)"},
            {"--cell PX",
             "with --heatmap: pixels per cell, 1..128 (default: from the size; above 1 024 tokens "
             "the map as 512 cells a side, each the largest weight of its block; pictures past "
             "8 192 px and SVG past 512 x 512 cells are drawn from blocks too)"},
            {"--capture-budget MB", "every head is kept while it fits in MB (default: 1024); above, a long "
                                    "text's heads are made on demand, only those drawn"},
            {"--precision fp32|bf16",
             "format of the linear layers (a checkpoint's bfloat16 weights used as "
             "stored); bf16 needs oneDNN and AVX-512, stderr compares it (default: fp32)"},
            {"\"text\"", "the text (English for the built-in model); a BERT model's top 5 for each [MASK]"},
        },
        {
            "attnlens-cli text \"The cat sat on the mat.\"",
            "attnlens-cli text --generate 20 \"Once upon a time\"",
            "attnlens-cli text --generate 20 --temperature 0.8 --top-p 0.9 --seed 7 \"Once upon a time\"",
            "attnlens-cli text --logits --json out.json \"The weather is nice today.\"",
            "attnlens-cli text --model bert-base-cased \"Paris is the [MASK] of France.\"",
            "attnlens-cli text --model Qwen2.5-0.5B-Instruct --chat --generate 40 \"What is attention?\"",
            "attnlens-cli text --heatmap map.png --layer 3 --head 0 --scale log --ignore-first \"The cat "
            "sat.\"",
            "attnlens-cli text --model Qwen2.5-0.5B --npy head.npy --layer 12 --head 3 \"$(cat long.txt)\"",
        }};
}

CommandHelp translateHelp() {
    return {
        {
            {"--model DIR", "a Marian German→English folder (default: marian-de-en-tiny)"},
            {"--beam N", "number of beams, 1..64, 1 = greedy (default: the model's generation config, 4 "
                         "built in)"},
            {"--max-new-tokens N", "at most N target tokens, 1..100000 (default: the generation config, "
                                   "127 built in)"},
            {"--json OUT", "write the tokens, ids, translation and every head: encoder, decoder, cross "
                           "[L][H][..][..]"},
            {"--heatmap OUT.png|svg", "draw one labelled attention matrix, as PNG or SVG"},
            {"--kind encoder|decoder|cross", "with --heatmap: which attention (default: cross)"},
            {"--layer L", "with --heatmap: layer from 0 (default: the last)"},
            {"--head H|mean|max|min", "with --heatmap: head from 0, or mean|max|min over the heads "
                                      "(default: mean)"},
            {"--colormap NAME", "with --heatmap: viridis|magma|inferno|plasma|cividis|grey|diverging "
                                "(default: viridis)"},
            {"--cell PX", "with --heatmap: pixels per cell, 1..128 (default: chosen from the matrix "
                          "size)"},
            {"--ablate KIND:L:H[,…]", "switch heads off (KIND encoder|decoder|cross, layer and head from "
                                      "0); stderr: the change"},
            {"--through L",
             "with --json: the encoder's rollout and attention flow through layers 0..L (from 0) into it"},
            {"--precision fp32|bf16", "format of the linear layers; bf16 needs oneDNN and AVX-512, stderr "
                                      "compares it (default: fp32)"},
            {"--value-weighted", "with --json: add \"value_weighted\" {encoder, decoder, cross}, each weight "
                                 "times its key's ‖v·W_O‖, rows renormalised; with --heatmap: draw that"},
            {"\"Satz\"", "the German sentence to translate"},
        },
        {
            "attnlens-cli translate \"Wie geht es dir?\"",
            "attnlens-cli translate --beam 1 --json out.json \"Das Haus ist klein.\"",
            "attnlens-cli translate --heatmap map.png --kind encoder --layer 0 --head max \"Ich habe "
            "Hunger.\"",
            "attnlens-cli translate --ablate cross:2:0,cross:2:1 --json out.json \"Wie geht es dir?\"",
        }};
}

CommandHelp unetHelp() {
    return {
        {
            {"--model DIR", "diffusers UNet2DModel or pipeline folder, or a UNet2DConditionModel folder (a "
                            "Stable Diffusion pipeline's unet/) (default: ddpm-fashion-tiny)"},
            {"--sample X.npy", "the U-Net's input, float32 [1, C, H, W] or [C, H, W] (required)"},
            {"--timestep T", "the timestep, 0..(the scheduler's timesteps − 1), 0..999 built in (required)"},
            {"--class C", "class number from 0 or id2label name; class-conditional models (the built-in) "
                          "need it"},
            {"--encoder-states E.npy",
             "text-conditioned U-Nets: the text encoder's last hidden state, float32 "
             "[1, 77, cross_attention_dim] (required for them)"},
            {"--ablate L:H[,L:H…]", "switch heads off: attention layer in execution order : head, from 0; "
                                    "stderr: the change"},
            {"--json OUT",
             "write the noise prediction and every attention layer's weights [heads][pixels][keys]: "
             "keys = pixels (self-attention, attn1) or text tokens (cross-attention, attn2; "
             "\"cross\": true)"},
        },
        {
            "attnlens-cli unet --sample x.npy --timestep 500 --class 3",
            "attnlens-cli unet --sample x.npy --timestep 999 --class Sneaker --json out.json",
            "attnlens-cli unet --sample x.npy --timestep 250 --class 0 --ablate 0:1,3:0 --json out.json",
            "attnlens-cli unet --model sd/unet --sample latents.npy --timestep 981 --encoder-states text.npy "
            "--json out.json",
        }};
}

CommandHelp t2iHelp() {
    return {
        {
            {"--model PIPE",
             "a Stable Diffusion pipeline folder (model_index.json, tokenizer/, text_encoder/, unet/, "
             "vae/, scheduler/), as diffusers saves it (required)"},
            {"--prompt P",
             "what to draw (required); CLIP reads 77 tokens, longer prompts are truncated (said)"},
            {"--negative N", "the negative prompt: the unconditional half of guidance (default: \"\")"},
            {"--steps S", "inference steps, 1..1000 (default: 50; PNDM runs S + 1 U-Net calls)"},
            {"--guidance G", "classifier-free guidance scale; 1 or less: no guidance, one U-Net call a step "
                             "(default: 7.5)"},
            {"--seed S", "the initial latents' seed (default: 0)"},
            {"--scheduler pndm|ddim|euler|dpm",
             "built from the folder's scheduler config (default: the folder's)"},
            {"--init-latents X.npy",
             "initial latents [1, 4, H/8, W/8] (before init_noise_sigma) instead of seeded "
             "noise; they set the size"},
            {"--size HxW",
             "image size, divisible by the pipeline's multiple (default: the model's, 512 for SD 1.x)"},
            {"--out IMG.png", "write the image"},
            {"--json OUT",
             "timesteps, tokens, final latents, the image [H][W][3] and per step every cross-attention "
             "layer's maps [1][pixels][77] (cond, and uncond when guided); large for big models"},
            {"--maps OUT.npy",
             "DAAM's aggregate [77][H][W]: each token's maps averaged over steps and layers, "
             "bicubic-upsampled to the image"},
            {"--all-heads", "with --json: every head's map [heads][pixels][77] instead of the mean"},
            {"--value-weighted",
             "keep the value-weighted maps too (each weight times its token's ‖v·W_O‖, rows "
             "renormalised): --json adds \"cond_value_weighted\", --overlay draws them"},
            {"--overlay OUT.png", "a word's map over the image, as the Text to image page draws it"},
            {"--word WORD", "with --overlay: a word of the prompt (CLIP pieces merged at </w>, as the page's "
                            "chips show them; <start>, <end>, padding) or its index from 0"},
            {"--step S", "with --overlay: the step from 0 (default: the mean over every step, DAAM's)"},
            {"--layer L", "with --overlay: a cross-attention layer from 0 (default: the mean over them)"},
            {"--head H|mean|max|min", "with --overlay: one head or the heads fused (default: mean)"},
            {"--half cond|uncond|cond-uncond",
             "with --overlay: the prompt's half of guidance, the negative prompt's, or their difference "
             "(default: cond)"},
            {"--colormap NAME", "with --overlay: viridis|magma|inferno|plasma|cividis|grey|diverging "
                                "(default: inferno; cond-uncond: diverging)"},
            {"--opacity A", "with --overlay: opacity of the map, 0..1 (default: 0.6)"},
        },
        {
            "attnlens-cli t2i --model sd-pipe --prompt \"a sneaker above a bag\" --steps 25 --out img.png",
            "attnlens-cli t2i --model sd-pipe --prompt \"a cat\" --scheduler euler --steps 20 --maps "
            "words.npy",
            "attnlens-cli t2i --model sd-pipe --prompt \"a cat\" --init-latents z.npy --json run.json",
            "attnlens-cli t2i --model sd-pipe --prompt \"a sneaker above a bag\" --overlay bag.png --word "
            "bag",
        }};
}

CommandHelp visionHelp() {
    return {
        {
            {"--model DIR", "a ViT, DeiT, DINO, DINOv2 or CLIP folder (default: vit-fashion-mnist)"},
            {"--json OUT", "write the top-5, logits, every head's attention [L][H][T][T] (CLS, then DINOv2's "
                           "registers, then the patches) and token_norms [L][T]"},
            {"--overlay OUT.png", "draw the attention map of --query over the image, as a PNG"},
            {"--layer L", "with --overlay: layer from 0 (default: the last)"},
            {"--head H|mean|max|min", "with --overlay: head from 0, or mean|max|min over the heads "
                                      "(default: mean)"},
            {"--query cls|regK|ROW,COL|rollout|flow|norms|text:K|relevance:K",
             "with --overlay: CLS's row, register K's (DINOv2 with registers), a patch's (from 0), rollout / "
             "CLS's flow up to --layer, the "
             "patch tokens' norms after --layer (high-norm outliers), or --texts' text K (from 0): each "
             "patch's cosine similarity with it, or its relevance (rollout × similarity above the mean) "
             "(default: cls)"},
            {"--colormap NAME", "with --overlay: viridis|magma|inferno|plasma|cividis|grey|diverging "
                                "(default: inferno)"},
            {"--opacity A", "with --overlay: opacity of the map, 0..1 (0: image only, 1: map only) "
                            "(default: 0.6)"},
            {"--ablate L:H[,L:H…]", "switch heads off (layer:head from 0); the output is the ablated "
                                    "run's, stderr: the change"},
            {"--texts \"A|B|…\"", "a CLIPModel folder: texts separated by '|'; stdout: each one's zero-shot "
                                  "probability, most probable first; --json: \"clip\" with every text's ids, "
                                  "logit, similarity and relevance maps [rows][cols]"},
            {"--interpolate-pos", "accept an input size other than the config's image_size (position "
                                  "embeddings interpolated)"},
            {"--precision fp32|bf16", "format of the linear layers; bf16 needs oneDNN and AVX-512, stderr "
                                      "compares it (default: fp32)"},
            {"IMAGE", "the picture to classify; the built-in model knows Fashion-MNIST clothing"},
        },
        {
            "attnlens-cli vision sneaker_1.png",
            "attnlens-cli vision --json out.json --overlay map.png --layer 3 --head max --query 3,4 "
            "coat_1.png",
            "attnlens-cli vision --overlay map.png --query rollout --colormap viridis --opacity 0.5 "
            "bag_1.png",
            "attnlens-cli vision --ablate 3:0,3:1 --json out.json sneaker_1.png",
            "attnlens-cli vision --model dinov2-with-registers-small --overlay norms.png --query norms "
            "dog.jpg",
            "attnlens-cli vision --model clip-vit-base-patch16 --texts \"a dog|a cat|a red car\" --overlay "
            "dog.png --query text:0 street.jpg",
        }};
}

CommandHelp tokenizeHelp() {
    return {
        {
            {"--model DIR", "a folder with tokenizer files: tokenizer.json, vocab.txt (WordPiece) or "
                            "vocab.json + merges.txt (GPT-2's BPE, or CLIP's where tokenizer_config.json "
                            "names CLIPTokenizer: a Stable Diffusion pipeline's tokenizer/), or a GGUF file "
                            "(its tokenizer.ggml.* vocabulary); weights not needed (required)"},
            {"--plain", "without the tokens the tokenizer adds around a text (BOS, [CLS] … [SEP])"},
            {"--chat", "the text as a user turn of the chat template (tokenizer_config.json or "
                       "chat_template.jinja), tokenized as transformers' apply_chat_template"},
            {"--json OUT", "write {\"ids\": [..], \"tokens\": [..]}"},
            {"\"text\"", "the text; stdout: one token a line, as the vocabulary names it"},
        },
        {
            "attnlens-cli tokenize --model Qwen2.5-0.5B \"Hello, world!\"",
            "attnlens-cli tokenize --model gemma-3-270m --json ids.json \"Bonjour 😀\"",
            "attnlens-cli tokenize --model resources/models/gpt2-en-tiny --plain \"The cat\"",
            "attnlens-cli tokenize --model stable-diffusion-v1-5/tokenizer \"a photo of a cat\"",
        }};
}

CommandHelp visionEvalHelp() {
    return {
        {
            {"--model DIR", "a ViT classifier folder (default: vit-fashion-mnist)"},
            {"--list LIST.tsv", "one image per line: PATH<TAB>LABEL (index from 0 or name), or PATH alone "
                                "(timed only)"},
            {"--idx-images F", "(Fashion-)MNIST IDX images, .gz or plain; goes with --idx-labels"},
            {"--idx-labels F", "the IDX labels of --idx-images, .gz or plain"},
            {"--limit N", "only the first N images, 0..100000000, 0 = all (default: 0)"},
            {"--capture", "capture every head's attention as a normal run does (for timing)"},
            {"--interpolate-pos", "accept an input size other than the config's image_size (position "
                                  "embeddings interpolated)"},
            {"--json OUT", "also write the counts per class and the confusion matrix"},
        },
        {
            "attnlens-cli vision-eval --idx-images t10k-images-idx3-ubyte.gz --idx-labels "
            "t10k-labels-idx1-ubyte.gz",
            "attnlens-cli vision-eval --list test.tsv --limit 500 --json eval.json",
            "attnlens-cli vision-eval --list test.tsv --capture",
        }};
}

// Every registered subcommand's help, by name (alphabetical, as the top-level usage lists them).
const std::map<std::string, CommandHelp>& allHelp() {
    static const std::map<std::string, CommandHelp> help = {
        {"attention", attentionHelp()},
        {"bench", benchHelp()},
        {"diff", diffHelp()},
        {"diffuse", diffuseHelp()},
        {"heads", headsHelp()},
        {"inspect", inspectHelp()},
        {"lens", lensHelp()},
        {"neuron", neuronHelp()},
        {"text", textHelp()},
        {"translate", translateHelp()},
        {"unet", unetHelp()},
        {"vision", visionHelp()},
        {"vision-eval", visionEvalHelp()},
        {"tokenize", tokenizeHelp()},
        {"t2i", t2iHelp()},
    };
    return help;
}

} // namespace

const CommandHelp& commandHelp(const std::string& name) {
    static const CommandHelp none;
    const auto& help = allHelp();
    const auto it = help.find(name);
    return it == help.end() ? none : it->second;
}

} // namespace cli
