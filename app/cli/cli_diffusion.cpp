// attnlens-cli unet / diffuse: the denoising U-Net (diffusers UNet2DModel folders; docs/architecture.md, "The
// CLI contract").
//
//   unet --model DIR --sample X.npy --timestep T [--class C] [--json OUT]
//       one forward; X.npy float32 [1, C, H, W] (or [C, H, W]);
//       OUT: {"noise_pred": [C][H][W], "attentions": [{"name", "path", "heads", "spatial": [h, w],
//             "weights": [heads][tokens][tokens], "value_norms": [heads][tokens] (‖v_j·W_O,hᵀ‖: weights ×
//             norms, rows renormalised, are the value-weighted maps)}, …]}   token = y·w + x, execution order
//       --ablate L:H[,…]: those heads off (L: attention layer in execution order, H: head, from 0;
//       transformers' head_mask semantics — diffusers has none); the JSON is of the ablated run and adds
//       "ablated" [[L, H]…], "noise_pred_relative_change" (‖ε̂_ablated − ε̂‖ / ‖ε̂‖) and
//       "noise_pred_max_abs_change"; stderr says the same.
//   diffuse [--model DIR] --scheduler ddim|ddpm --steps N [--class C] [--eta E] [--seed S] [--size H[,W]]
//           [--init-noise X.npy] [--noise-dir D] [--out IMG.png] [--json OUT]
//       the sampling loop as diffusers' DDPMPipeline / DDIMPipeline run it; D holds step_000.npy, …
//       (the variance noise of loop step i); OUT: {"timesteps": [...], "final_sample": [C][H][W]};
//       IMG: round(clamp(x/2 + 0.5, 0, 1)·255). Without --model: the built-in model.
//       --overlay OUT.png [--step S] [--layer L] [--query ROW,COL[:ROW,COL]] [--key-side] [--head
//       H|mean|max|min]
//       [--on x0|xt] [--colormap NAME] [--opacity A]: where the image pixel ROW,COL (from 0; or the region of
//       pixels between two corners, inclusive) looks in attention layer L (index in execution order from 0,
//       or its module path; default the first) at loop step S (default the last), over that step's x̂0 (or
//       x_t), enlarged with crisp pixels; --key-side: who attends to the region instead; --value-weighted:
//       each head's weights times its keys' ‖v·W_O‖, rows renormalised, before the fusion.
//       --gif OUT.gif [--delay MS]: the same view at every step, as an animated GIF (giflib) —
//       unet_maps.h's renderUNetView draws both, as it draws the Diffusion page.

#include "cli_common.h"
#include "cli_overlay.h"
#include "cli_unet_args.h"
#include "core/diffusion/denoise_session.h"
#include "core/diffusion/unet_maps.h"
#include "core/export/gif_writer.h"
#include "core/export/overlay.h"
#include "core/export/tensor_json.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/io/npy_reader.h"
#include "core/util/error.h"

#include <charconv>
#include <cstdio>
#include <iostream>

namespace {

using namespace attnlens;

int runUnet(const std::vector<std::string>& argv) {
    const cli::Args args(
        argv, {"--model", "--sample", "--timestep", "--class", "--encoder-states", "--json", "--ablate"});
    if (!args.positionals().empty())
        throw cli::UsageError("unexpected argument '" + args.positionals()[0] + "'");
    if (!args.has("--sample")) throw cli::UsageError("--sample X.npy is required");
    if (!args.has("--timestep")) throw cli::UsageError("--timestep T is required");
    const DiffusionModel model = cli::loadDiffusion(args);
    const cli::UnetInput in = cli::readUnetInput(args, model);
    const int timestep = in.timestep;
    const auto& cls = in.classLabel;
    const UNetConditioning conditioning = in.conditioning();
    const int textTokens = in.encoderStates.empty() ? 77 : static_cast<int>(in.encoderStates.dim(0));
    UNetRunOptions run;
    if (const auto list = args.value("--ablate")) {
        const auto layers = model.unet->attentionLayers(static_cast<int>(in.sample.dim(1)),
                                                        static_cast<int>(in.sample.dim(2)), textTokens);
        int maxHeads = 0;
        for (const auto& l : layers)
            maxHeads = std::max(maxHeads, l.heads);
        if (layers.empty()) throw cli::UsageError("--ablate: this U-Net has no attention layer");
        run.offHeads = cli::parseHeadList("--ablate", *list, static_cast<int>(layers.size()), maxHeads);
        for (const auto& [l, h] : run.offHeads)
            if (h >= layers[size_t(l)].heads)
                throw cli::UsageError("--ablate: head " + std::to_string(h) + " is out of range (" +
                                      layers[size_t(l)].name + " has " +
                                      std::to_string(layers[size_t(l)].heads) + " heads, numbered from 0)");
    }
    const UNetOutput out = model.unet->forward(in.sample, static_cast<float>(timestep), conditioning, run);
    Json ablation;
    if (!run.offHeads.empty()) {
        // What the ablation changed: the noise prediction against the plain pass.
        UNetRunOptions plainRun;
        plainRun.captureAttention = false;
        const Tensor plain =
            model.unet->forward(in.sample, static_cast<float>(timestep), conditioning, plainRun).noisePred;
        double diff2 = 0, norm2 = 0, maxAbs = 0;
        for (int64_t i = 0; i < plain.numel(); ++i) {
            const double d = double(out.noisePred.data()[i]) - double(plain.data()[i]);
            diff2 += d * d;
            norm2 += double(plain.data()[i]) * double(plain.data()[i]);
            maxAbs = std::max(maxAbs, std::abs(d));
        }
        const double relative = norm2 > 0 ? std::sqrt(diff2 / norm2) : 0.0;
        std::cerr << "note: ablated " << run.offHeads.size() << " head(s): the noise prediction moved by "
                  << relative * 100.0 << " % (relative L2), at most " << maxAbs << "\n";
        Json heads = Json::array();
        for (const auto& [l, h] : run.offHeads)
            heads.push_back({l, h});
        ablation = {{"ablated", heads},
                    {"noise_pred_relative_change", relative},
                    {"noise_pred_max_abs_change", maxAbs}};
    }

    std::cout << "noise prediction " << shapeToString(out.noisePred.shape()) << ", " << out.attentions.size()
              << " attention layers\n";
    for (const auto& a : out.attentions)
        std::cout << "  " << a.info.name << "  " << unetPathName(a.info.path) << "  " << a.info.height << "x"
                  << a.info.width
                  << (a.info.cross ? " -> " + std::to_string(a.info.textTokens) + " text tokens" : "") << "  "
                  << a.info.heads << (a.info.heads == 1 ? " head\n" : " heads\n");
    if (const auto path = args.value("--json")) {
        Json top = {{"timestep", timestep}, {"class", cls ? Json(*cls) : Json()}};
        if (!ablation.is_null()) top.update(ablation); // the run below is the ablated one
        std::string text = top.dump();
        text.pop_back();
        text += ",\"noise_pred\":";
        attnlens::appendNested(text, out.noisePred.data(), out.noisePred.shape());
        text += ",\"attentions\":[";
        for (size_t i = 0; i < out.attentions.size(); ++i) {
            const auto& a = out.attentions[i];
            std::string head = Json{
                {"name", a.info.name},
                {"path", unetPathName(a.info.path)},
                {"heads", a.info.heads},
                {"spatial", {a.info.height, a.info.width}},
                {"cross",
                 a.info.cross}}.dump();
            head.pop_back();
            text += (i ? "," : "") + head + ",\"weights\":";
            attnlens::appendNested(text, a.weights.data(), a.weights.shape());
            text += ",\"value_norms\":"; // [heads][keys]: ‖v_j·W_O,hᵀ‖ (value-weighted maps)
            attnlens::appendNested(text, a.valueNorms.data(), a.valueNorms.shape());
            text += '}';
        }
        text += "]}\n";
        attnlens::writeText(*path, text);
    }
    return 0;
}

float parseEta(const cli::Args& args) {
    const auto v = args.value("--eta");
    if (!v) return 0.0f;
    float eta = 0;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), eta);
    if (ec != std::errc() || ptr != v->data() + v->size() || !(eta >= 0.0f && eta <= 1.0f))
        throw cli::UsageError("--eta: expected a number in [0, 1], got '" + *v + "'");
    return eta;
}

// --overlay / --gif: one layer's map for an image region, drawn by unet_maps.h's renderUNetView.
struct ViewRequest {
    std::optional<std::string> png, gif;
    int step = -1;     // -1: the last (--overlay only)
    std::string layer; // index or module path; empty: the first
    int delayMs = 100; // per GIF frame
    UNetView view;
};

PixelRegion parseQuery(const std::string& q) {
    try {
        return parsePixelRegion(q);
    } catch (const Error& e) {
        throw cli::UsageError(std::string("--") + e.what());
    }
}

std::optional<ViewRequest> parseView(const cli::Args& args) {
    const auto png = args.value("--overlay"), gif = args.value("--gif");
    for (const char* flag : {"--layer", "--query", "--head", "--on", "--colormap", "--opacity", "--key-side",
                             "--value-weighted"})
        if (!png && !gif && args.has(flag))
            throw cli::UsageError(std::string(flag) + " applies to --overlay and --gif only");
    if (!png && args.has("--step"))
        throw cli::UsageError("--step applies to --overlay only (--gif shows every step)");
    if (!gif && args.has("--delay")) throw cli::UsageError("--delay applies to --gif only");
    if (!png && !gif) return std::nullopt;
    ViewRequest r;
    r.png = png;
    r.gif = gif;
    r.step = args.intValue("--step", -1, 0, DenoiseSession::kMaxSteps - 1);
    r.layer = args.value("--layer", "");
    r.delayMs = args.intValue("--delay", 100, 10, 10000);
    r.view.query = parseQuery(args.value("--query", "0,0"));
    r.view.keySide = args.has("--key-side");
    r.view.valueWeighted = args.has("--value-weighted");
    const std::string on = args.value("--on", "x0");
    if (on != "x0" && on != "xt") throw cli::UsageError("--on: expected x0 or xt, got '" + on + "'");
    r.view.onNoisy = on == "xt";
    r.view.options = cli::parseOverlayOptions(args);
    r.view.heads =
        cli::parseHead(args.value("--head", "mean"), 1 << 20); // the layer's own count is checked below
    return r;
}

// The attention layer --layer names (an index from 0 or a module path).
size_t chooseLayer(const std::vector<UNetAttentionMap>& layers, const std::string& name) {
    if (layers.empty()) throw cli::UsageError("--overlay/--gif: this U-Net has no attention layer");
    if (name.empty()) return 0;
    int idx = -1;
    const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), idx);
    if (ec == std::errc() && ptr == name.data() + name.size()) {
        if (idx < 0 || static_cast<size_t>(idx) >= layers.size())
            throw cli::UsageError("--layer: " + name + " is out of range (" + std::to_string(layers.size()) +
                                  " attention layers, numbered from 0)");
        return static_cast<size_t>(idx);
    }
    for (size_t i = 0; i < layers.size(); ++i)
        if (layers[i].info.name == name) return i;
    throw cli::UsageError("--layer: no attention layer is named '" + name + "'");
}

void checkView(const ViewRequest& r, const UNetAttentionMap& map, const ImageU8& image) {
    const PixelRegion& q = r.view.query;
    if (q.row1 >= image.height || q.col1 >= image.width)
        throw cli::UsageError("--query: " + std::to_string(q.row1) + "," + std::to_string(q.col1) +
                              " lies outside the " + std::to_string(image.height) + "x" +
                              std::to_string(image.width) + " image");
    if (r.view.heads.head >= map.info.heads)
        throw cli::UsageError("--head: " + std::to_string(r.view.heads.head) + " is out of range (" +
                              map.info.name + " has " + std::to_string(map.info.heads) +
                              " heads, numbered from 0)");
}

void writeViews(const DenoiseSession& session, const ViewRequest& r) {
    if (r.png) {
        const int step = r.step < 0 ? session.completedSteps() - 1 : r.step;
        if (step >= session.completedSteps())
            throw cli::UsageError("--step: " + std::to_string(step) + " is out of range (the run has " +
                                  std::to_string(session.completedSteps()) + " steps, numbered from 0)");
        const UNetOutput out = session.attentionAt(step);
        const auto& map = out.attentions[chooseLayer(out.attentions, r.layer)];
        const DenoiseStep& s = session.stepAt(step);
        checkView(r, map, unetViewImage(s, r.view));
        writePng(*r.png, renderUNetView(s, &map, r.view));
        const PixelRegion& q = r.view.query;
        std::cout << "overlay: step " << step << " (t = " << s.timestep << "), " << map.info.name << " ("
                  << map.info.height << "x" << map.info.width << "), query " << q.row0 << "," << q.col0
                  << (q.isPixel() ? std::string()
                                  : ":" + std::to_string(q.row1) + "," + std::to_string(q.col1))
                  << (r.view.keySide ? " (key side)" : "") << " -> " << *r.png << "\n";
    }
    if (r.gif) {
        GifWriter gif(*r.gif, std::max(1, r.delayMs / 10));
        std::string layerName;
        for (int i = 0; i < session.completedSteps(); ++i) {
            const UNetOutput out = session.attentionAt(i);
            const auto& map = out.attentions[chooseLayer(out.attentions, r.layer)];
            if (i == 0) checkView(r, map, unetViewImage(session.stepAt(i), r.view));
            layerName = map.info.name;
            gif.addFrame(renderUNetView(session.stepAt(i), &map, r.view));
        }
        gif.finish();
        std::cout << "gif: " << gif.frames() << " frames, " << layerName << " -> " << *r.gif << "\n";
    }
}

int runDiffuse(const std::vector<std::string>& argv) {
    const cli::Args args(argv, {"--model", "--scheduler",  "--steps",     "--class", "--eta",   "--seed",
                                "--size",  "--init-noise", "--noise-dir", "--out",   "--json",  "--overlay",
                                "--gif",   "--delay",      "--step",      "--layer", "--query", "--head",
                                "--on",    "--colormap",   "--opacity"},
                         {"--key-side", "--value-weighted"});
    if (!args.positionals().empty())
        throw cli::UsageError("unexpected argument '" + args.positionals()[0] + "'");
    const auto scheduler = args.value("--scheduler");
    if (!scheduler) throw cli::UsageError("--scheduler ddim|ddpm is required");
    if (*scheduler != "ddim" && *scheduler != "ddpm")
        throw cli::UsageError("--scheduler: expected ddim or ddpm, got '" + *scheduler + "'");
    if (!args.has("--steps")) throw cli::UsageError("--steps N is required");
    DenoiseOptions options;
    options.scheduler = *scheduler == "ddim" ? SchedulerKind::Ddim : SchedulerKind::Ddpm;
    options.steps = args.intValue("--steps", 50, 1, DenoiseSession::kMaxSteps);
    options.eta = parseEta(args);
    if (options.scheduler == SchedulerKind::Ddpm && args.has("--eta"))
        throw cli::UsageError("--eta applies to --scheduler ddim only");
    options.seed = cli::parseSeed(args);
    if (const auto size = args.value("--size")) {
        int h = 0, w = 0;
        if (std::sscanf(size->c_str(), "%d,%d", &h, &w) == 2 || std::sscanf(size->c_str(), "%d", &h) == 1) {
            if (w == 0) w = h;
        }
        if (h < 1 || w < 1 || h > 4096 || w > 4096)
            throw cli::UsageError("--size: expected H or H,W in 1..4096, got '" + *size + "'");
        options.height = h;
        options.width = w;
    }
    const auto views = parseView(args);
    const DiffusionModel model = cli::loadDiffusion(args);
    cli::refuseTextConditioned(model, "diffuse");
    options.classLabel = cli::parseClass(args, model);
    if (const auto path = args.value("--init-noise")) options.initNoise = cli::readSample(*path);
    if (const auto dir = args.value("--noise-dir")) {
        std::error_code ec;
        if (!std::filesystem::is_directory(*dir, ec))
            throw cli::UsageError("--noise-dir: '" + *dir + "' is not a folder");
        options.stepNoise = [dir = std::filesystem::path(*dir)](int step) {
            char name[32];
            std::snprintf(name, sizeof name, "step_%03d.npy", step);
            const auto path = dir / name;
            std::error_code e;
            if (!std::filesystem::exists(path, e))
                throw Error("--noise-dir: '" + path.string() +
                            "' is missing (the variance noise of loop step " + std::to_string(step) + ")");
            return cli::readSample(path.string());
        };
    }
    DenoiseSession session(model, std::move(options));
    session.run();
    const Tensor& final = session.finalSample();

    if (const auto path = args.value("--json")) {
        std::string text =
            Json{{"scheduler", *scheduler},
                 {"steps", session.stepCount()},
                 {"timesteps", session.timesteps()},
                 {"class", session.options().classLabel ? Json(*session.options().classLabel) : Json()},
                 {"seed", session.options().seed}}
                .dump();
        text.pop_back();
        text += ",\"final_sample\":";
        attnlens::appendNested(text, final.data(), final.shape());
        text += "}\n";
        attnlens::writeText(*path, text);
    }
    if (const auto path = args.value("--out")) {
        const ImageU8 img = sampleToImage(final);
        writePng(*path, img);
    }
    if (views) writeViews(session, *views);
    std::cout << *scheduler << ", " << session.stepCount() << " steps"
              << (session.options().classLabel
                      ? ", class " + std::to_string(*session.options().classLabel) + " (" +
                            model.className(*session.options().classLabel) + ")"
                      : std::string())
              << ", seed " << session.options().seed << ": " << shapeToString(final.shape()) << " sample"
              << (args.value("--out") ? " -> " + *args.value("--out") : std::string()) << "\n";
    return 0;
}

const cli::Registration regUnet{
    "unet",
    "[--model DIR] --sample X.npy --timestep T [--class C] [--encoder-states E.npy] [--ablate L:H[,L:H…]] "
    "[--json OUT]",
    "one U-Net forward (diffusers UNet2DModel / UNet2DConditionModel): noise prediction and every attention "
    "layer (self and cross); "
    "--ablate switches heads off (attention layer in execution order : head, from 0)",
    &runUnet};
const cli::Registration regDiffuse{
    "diffuse",
    "[--model DIR] --scheduler ddim|ddpm --steps N [--class C] [--eta E] [--seed S] "
    "[--size H[,W]] [--init-noise X.npy] [--noise-dir D] [--out IMG.png] [--json OUT] "
    "[--overlay OUT.png [--step S]] [--gif OUT.gif [--delay MS]] [--layer L|NAME] "
    "[--query ROW,COL[:ROW,COL]] [--key-side] [--value-weighted] [--head H|mean|max|min] [--on x0|xt] "
    "[--colormap NAME] [--opacity A]",
    "generate an image with DDPM or DDIM sampling (the built-in model without --model)", &runDiffuse};

} // namespace
