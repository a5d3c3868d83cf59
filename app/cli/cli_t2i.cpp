// attnlens-cli t2i: a Stable Diffusion pipeline folder run as StableDiffusionPipeline.__call__ runs it
// (core/diffusion/t2i_pipeline.h), the cross-attention of every step kept:
//   t2i --model PIPE --prompt P [--negative N] [--steps S] [--guidance G] [--seed S]
//       [--scheduler pndm|ddim|euler|dpm] [--init-latents X.npy] [--size HxW] [--out IMG.png] [--json OUT]
//       [--maps OUT.npy] [--all-heads] [--value-weighted]
// --value-weighted: the JSON adds "cond_value_weighted" (and "uncond_value_weighted") per layer, each head's
// weights times its tokens' ‖v·W_O‖ renormalised; --overlay draws that map.

#include "cli_common.h"
#include "cli_overlay.h"
#include "cli_unet_args.h"
#include "core/diffusion/t2i_json.h"
#include "core/diffusion/t2i_maps.h"
#include "core/export/npy.h"
#include "core/export/overlay.h"
#include "core/export/tensor_json.h"
#include "core/io/json_file.h"
#include "core/io/npy_reader.h"
#include "core/util/error.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iostream>

namespace {

using namespace attnlens;

T2iRequest readRequest(const cli::Args& args) {
    T2iRequest r;
    if (!args.has("--prompt")) throw cli::UsageError("--prompt P is required");
    r.prompt = *args.value("--prompt");
    r.negative = args.value("--negative", "");
    r.steps = args.intValue("--steps", 50, 1, 1000);
    r.guidance = static_cast<float>(args.doubleValue("--guidance", 7.5, 0.0, 100.0));
    r.seed = cli::parseSeed(args);
    if (const auto s = args.value("--scheduler")) {
        r.sampler = parseSamplerName(*s);
        if (!r.sampler)
            throw cli::UsageError("--scheduler: expected pndm, ddim, euler or dpm, got '" + *s + "'");
    }
    if (const auto size = args.value("--size")) {
        const auto hw = cli::parseIntPair(*size, 'x');
        if (!hw || hw->first < 8 || hw->second < 8 || hw->first > 2048 || hw->second > 2048)
            throw cli::UsageError("--size: expected HxW in 8..2048, got '" + *size + "'");
        r.height = hw->first;
        r.width = hw->second;
    }
    if (const auto path = args.value("--init-latents")) {
        r.initLatents = readNpy(*path);
        if (r.initLatents.rank() == 4 && r.initLatents.dim(0) == 1)
            r.initLatents =
                r.initLatents.reshaped({r.initLatents.dim(1), r.initLatents.dim(2), r.initLatents.dim(3)});
        for (float v : r.initLatents.values())
            if (!std::isfinite(v)) throw Error("'" + *path + "': holds a value that is not finite");
        if (r.initLatents.rank() != 3)
            throw Error("'" + *path + "': shape " + shapeToString(r.initLatents.shape()) +
                        ", expected [1, channels, height / 8, width / 8]");
        if (!args.has("--size")) { // the latents set the size
            r.height = 0;
            r.width = 0;
        }
    }
    r.allHeads = args.has("--all-heads");
    r.valueWeighted = args.has("--value-weighted");
    return r;
}

// --word: a word of the prompt or its index (as t2iWords, the page's chips, give them), checked before the
// run.
int overlayWord(const cli::Args& args, const TextToImagePipeline& pipe, const std::string& prompt) {
    const auto word = args.value("--word");
    if (!word)
        throw cli::UsageError("--overlay needs --word WORD (a word of the prompt, or its index from 0)");
    T2iResult header;
    static_cast<T2iPrompt&>(header) = t2iPrompt(pipe, prompt);
    const auto words = t2iWords(header);
    const int w = t2iFindWord(words, *word);
    if (w < 0) throw cli::UsageError("--word: '" + *word + "' is not a word of the prompt");
    return w;
}

// --overlay: a word's map over the image, drawn as the Text to image page draws it (t2i_maps.h).
RgbImage wordOverlay(const cli::Args& args, const T2iResult& r, int word) {
    T2iMapQuery q;
    q.tokens = t2iWords(r)[size_t(word)].tokens;
    q.step = args.intValue("--step", -1, -1, static_cast<int>(r.steps.size()) - 1);
    q.layer = args.intValue("--layer", -1, -1, static_cast<int>(t2iCrossLayers(r).size()) - 1);
    if (const auto head = args.value("--head")) q.heads = parseHeadSelection(*head);
    q.valueWeighted = args.has("--value-weighted");
    const std::string half = args.value("--half", "cond");
    if (half == "uncond")
        q.half = T2iHalf::Uncond;
    else if (half == "cond-uncond")
        q.half = T2iHalf::Difference;
    else if (half != "cond")
        throw cli::UsageError("--half: expected cond, uncond or cond-uncond, got '" + half + "'");
    const OverlayOptions o = cli::parseOverlayOptions(args);
    const ImageU8 image = t2iImageU8(r.image);
    return renderT2iOverlay(image, t2iWordMap(r, q, image.height, image.width), o, q.half);
}

int runT2i(const std::vector<std::string>& argv) {
    const cli::Args args(argv, {"--model", "--prompt",    "--negative",     "--steps",    "--guidance",
                                "--seed",  "--scheduler", "--init-latents", "--size",     "--out",
                                "--json",  "--maps",      "--overlay",      "--word",     "--step",
                                "--layer", "--head",      "--half",         "--colormap", "--opacity"},
                         {"--all-heads", "--value-weighted"});
    if (!args.positionals().empty())
        throw cli::UsageError("unexpected argument '" + args.positionals()[0] +
                              "' (the prompt goes after --prompt)");
    if (!args.has("--model"))
        throw cli::UsageError("--model PIPE is required (a Stable Diffusion pipeline folder)");
    T2iRequest request = readRequest(args);
    const auto pipe = TextToImagePipeline::load(*args.value("--model"));
    if (!request.initLatents.empty() && request.height == 0) {
        const int f = pipe->vae().config().scaleFactor();
        request.height = static_cast<int>(request.initLatents.dim(1)) * f;
        request.width = static_cast<int>(request.initLatents.dim(2)) * f;
    }
    request.captureMaps = args.has("--json") || args.has("--maps") || args.has("--overlay");
    const int word = args.has("--overlay") ? overlayWord(args, *pipe, request.prompt) : -1;
    const std::string head = args.value("--head", "mean");
    if (args.has("--overlay") && head != "mean") request.allHeads = true; // one head, max or min: every head
    Callbacks callbacks;
    const bool terminal = isatty(STDERR_FILENO) != 0;
    if (terminal)
        callbacks.progress = [](double fraction, const std::string& stage) {
            std::cerr << "\r" << stage << " (" << static_cast<int>(fraction * 100) << " %)      "
                      << std::flush;
        };
    const T2iResult r = runTextToImage(*pipe, request, &callbacks);
    if (terminal) std::cerr << "\r" << std::string(40, ' ') << "\r";
    if (r.truncated)
        std::cerr << "note: the prompt is " << r.promptTokens
                  << " CLIP tokens; the text encoder reads 77: truncated after the first 75 pieces\n";
    std::cout << pipe->className() << ", " << samplerName(r.sampler) << ", " << r.timesteps.size()
              << " U-Net calls" << (request.guidance > 1.0f ? " x 2 (guided)" : "") << ": " << r.image.dim(1)
              << "x" << r.image.dim(2) << " image"
              << (args.value("--out") ? " -> " + *args.value("--out") : std::string()) << "\n";
    if (const auto out = args.value("--out")) writePng(*out, t2iImageU8(r.image));
    if (const auto path = args.value("--maps"))
        writeNpy(*path,
                 aggregateWordMaps(r, static_cast<int>(r.image.dim(1)), static_cast<int>(r.image.dim(2))));
    if (const auto path = args.value("--json")) writeT2iRunJson(*path, r, request);
    if (const auto path = args.value("--overlay")) writePng(*path, wordOverlay(args, r, word));
    return 0;
}

const cli::Registration regT2i{
    "t2i",
    "--model PIPE --prompt P [--negative N] [--steps S] [--guidance G] [--seed S] "
    "[--scheduler pndm|ddim|euler|dpm] [--init-latents X.npy] [--size HxW] [--out IMG.png] [--json OUT] "
    "[--maps OUT.npy] [--all-heads] [--value-weighted] [--overlay OUT.png --word WORD [--step S] [--layer L] "
    "[--head H|mean|max|min] [--half cond|uncond|cond-uncond] [--colormap NAME] [--opacity A]]",
    "text to image with a Stable Diffusion pipeline folder (StableDiffusionPipeline semantics); the "
    "cross-attention of every step: which word lands where",
    &runT2i};

} // namespace
