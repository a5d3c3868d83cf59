// attnlens-cli neuron: one attention score taken apart (core/analysis/neuron_view.h) — the head's query and
// key vectors, their products per dimension, q·k, ÷√d_k and the softmax weight — on any model kind we load.
//
//   attnlens-cli neuron [--model DIR] --layer L --head H --query Q --key K|argmax [--json OUT] [--png OUT]
//                       [--sort] (--src "Satz" [--kind encoder|decoder|cross] | --text "text" | --image IMG
//                       | --sample X.npy --timestep T [--class C])
//
// Text (Marian, default the built-in marian-de-en-tiny): the sentence is translated greedily and the kind's
// layer sees a teacher-forced pass over that translation; Q and K index the rows / columns of the kind's
// matrix as `translate --heatmap` labels them. --text (BERT / GPT-2, default the built-in llama-en-tiny): the
// text's tokens from 0, kind "encoder" (BERT) or "decoder" (GPT-2, causal: keys after the query are masked).
// Images (ViT, default the built-in vit-fashion-mnist): token 0
// is CLS, patch (r, c) is 1 + r·cols + c; Q and K may also be "ROW,COL" patches. Diffusion (--sample; default
// the built-in ddpm-fashion-tiny): L is the attention layer in execution order, Q and K tokens of its grid
// (y·w + x, or "ROW,COL").
// --key argmax: the key the query attends to most in that head.
// stdout: the arithmetic. OUT: {"model", "kind", "layer", "head", "query": {"index", "label"}, "key": {…},
// "head_dim", "q", "k", "product" ([head_dim] each), "dot", "scale", "scaled", "masked", "row_scores"
// ([keys], null where masked), "row_max", "partition", "weight", "captured_weight"}. --png:
// ui/render/neuron_chart's picture.

#include "cli_common.h"
#include "cli_heatmap.h"
#include "cli_image.h"
#include "cli_text_input.h"
#include "cli_unet_args.h"
#include "core/analysis/neuron_view.h"
#include "core/analysis/text_lenses.h"
#include "core/decode/decode_session.h"
#include "core/decode/trace_attention.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/marian_folder.h"
#include "core/models/vit_model.h"
#include "ui/render/neuron_chart.h"

#include <charconv>
#include <cmath>
#include <iostream>

namespace {

using namespace attnlens;

// What the score is of: the layer's inputs, the labels of its axes and the captured [H, n, m] attention.
struct Subject {
    std::string model, kind;
    AttentionInputs inputs;
    Tensor captured; // [heads, n, m]
    std::vector<std::string> queryLabels, keyLabels;
    int gridCols = 0;   // a grid to read "ROW,COL" in (0: none)
    int gridOffset = 0; // token of grid cell (0, 0) (1 for ViT: CLS first)
    int layers = 0;
    std::shared_ptr<const void> model_; // keeps the model that inputs.attention points into alive
};

int parseIndex(const std::string& flag, const std::string& text, const Subject& s, int count) {
    int index = -1;
    if (const auto pair = cli::parseIntPair(text, ',')) {
        if (s.gridCols == 0)
            throw cli::UsageError(flag + ": ROW,COL applies to pictures only; give a token index");
        if (pair->second < 0 || pair->second >= s.gridCols || pair->first < 0)
            throw cli::UsageError(flag + ": " + text + " lies outside the " + std::to_string(s.gridCols) +
                                  "-column grid");
        index = s.gridOffset + pair->first * s.gridCols + pair->second;
    } else if (text == "cls" && s.gridOffset == 1) {
        index = 0;
    } else {
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
        if (ec != std::errc() || ptr != text.data() + text.size() || index < 0)
            throw cli::UsageError(flag + ": expected a token index from 0" +
                                  std::string(s.gridCols ? " or ROW,COL" : "") + ", got '" + text + "'");
    }
    if (index >= count)
        throw cli::UsageError(flag + ": " + text + " is out of range (" + std::to_string(count) +
                              " tokens, numbered from 0)");
    return index;
}

void checkLayer(const Subject& s, int layer) {
    if (layer >= s.layers)
        throw cli::UsageError("--layer: " + std::to_string(layer) + " is out of range (" +
                              std::to_string(s.layers) + " layers, numbered from 0)");
}

Subject textSubject(const cli::Args& args, int layer) {
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Marian);
    if (const auto info = inspectModelFolder(dir); info.kind == ModelKind::Text)
        throw cli::UsageError("'" + dir.string() + "' is a '" + info.modelType +
                              "' text model: give its input with --text");
    const auto kind = parseAttentionKind(args.value("--kind", "cross"));
    if (!kind)
        throw cli::UsageError("--kind: expected encoder, decoder or cross, got '" + args.value("--kind", "") +
                              "'");
    const auto folder = loadMarianFolder(dir);
    const auto& c = folder.model->config();
    Subject s;
    s.model_ = folder.model;
    s.model = dir.filename().string();
    s.kind = std::string(attentionKindId(*kind));
    s.layers = *kind == AttentionKind::EncoderSelf ? c.encoderLayers : c.decoderLayers;
    checkLayer(s, layer);
    DecodeSession session(folder.model, folder.tokenizer, *args.value("--src"), {});
    session.run();
    const auto trace = session.trace();
    std::cout << "translation: " << trace->translation << "\n";
    s.inputs = traceAttentionInputs(*folder.model, *trace, *kind, layer);
    s.captured = traceAttention(*trace, *kind).sub({layer}).clone();
    const TraceAxes axes = traceAxes(*trace, *kind, folder.tokenizer->idToPiece(c.decoderStartTokenId));
    s.queryLabels = axes.rows;
    s.keyLabels = axes.columns;
    return s;
}

Subject textModelSubject(const cli::Args& args, int layer) {
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Text);
    const auto folder = std::make_shared<const TextFolder>(loadTextFolder(dir));
    Subject s;
    s.model_ = folder;
    s.model = dir.filename().string();
    s.kind = std::string(attentionKindId(textAttentionKind(*folder)));
    s.layers = folder->layers();
    checkLayer(s, layer);
    const TextEncoding e = cli::encodeText(*folder, *args.value("--text"));
    s.inputs = textAttentionInputs(*folder, e.ids, layer);
    s.captured = folder->forward(e.ids, false).attentions.sub({layer}).clone();
    s.queryLabels = e.tokens;
    s.keyLabels = e.tokens;
    return s;
}

Subject imageSubject(const cli::Args& args, int layer) {
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Vit);
    const auto model = VitModel::load(dir);
    Subject s;
    s.model_ = model;
    s.model = dir.filename().string();
    s.kind = "vit";
    s.layers = model->config().numLayers;
    checkLayer(s, layer);
    VitRunOptions run;
    run.interpolatePositions = true;
    run.probe = &s.inputs;
    run.probeLayer = layer;
    const VitResult r = model->run(cli::loadImageQuietly(*args.value("--image")), run);
    s.captured = r.output.attentions.sub({layer}).clone();
    s.gridCols = r.grid.cols();
    s.gridOffset = 1;
    s.queryLabels.push_back("CLS");
    for (int row = 0; row < r.grid.rows(); ++row)
        for (int col = 0; col < r.grid.cols(); ++col)
            s.queryLabels.push_back("patch " + std::to_string(row) + "," + std::to_string(col));
    s.keyLabels = s.queryLabels;
    return s;
}

Subject unetSubject(const cli::Args& args, int layer) {
    const DiffusionModel model = cli::loadDiffusion(args);
    cli::refuseTextConditioned(model, "neuron");
    const cli::UnetInput in = cli::readUnetInput(args, model);
    const auto layers =
        model.unet->attentionLayers(static_cast<int>(in.sample.dim(1)), static_cast<int>(in.sample.dim(2)));
    Subject s;
    s.model_ = model.unet;
    s.model = model.folder.dir.filename().string();
    s.kind = "unet";
    s.layers = static_cast<int>(layers.size());
    if (layer >= s.layers)
        throw cli::UsageError("--layer: " + std::to_string(layer) + " is out of range (" +
                              std::to_string(s.layers) +
                              " attention layers in execution order, numbered from 0)");
    UNetRunOptions run;
    run.probe = &s.inputs;
    run.probeLayer = layer;
    const UNetOutput out =
        model.unet->forward(in.sample, static_cast<float>(in.timestep), in.classLabel, run);
    const UNetAttentionMap& map = out.attentions[size_t(layer)];
    s.kind += " " + map.info.name;
    s.captured = map.weights;
    s.gridCols = map.info.width;
    for (int y = 0; y < map.info.height; ++y)
        for (int x = 0; x < map.info.width; ++x)
            s.queryLabels.push_back("pixel " + std::to_string(y) + "," + std::to_string(x));
    s.keyLabels = s.queryLabels;
    return s;
}

Json vectorJson(const std::vector<float>& v) {
    return Json(v);
}

int runNeuron(const std::vector<std::string>& argv) {
    const cli::Args args(argv,
                         {"--model", "--src", "--kind", "--text", "--image", "--sample", "--timestep",
                          "--class", "--layer", "--head", "--query", "--key", "--json", "--png"},
                         {"--sort"});
    if (!args.positionals().empty())
        throw cli::UsageError("unexpected argument '" + args.positionals().front() + "'");
    const int sources = int(args.has("--src")) + int(args.has("--text")) + int(args.has("--image")) +
                        int(args.has("--sample"));
    if (sources != 1) throw cli::UsageError("give exactly one of --src, --text, --image, --sample");
    if (args.has("--kind") && !args.has("--src")) throw cli::UsageError("--kind applies to --src only");
    for (const char* flag : {"--layer", "--head", "--query", "--key"})
        if (!args.has(flag)) throw cli::UsageError(std::string(flag) + " is required");
    if (const auto png = args.value("--png")) cli::checkHeatmapPath("--png", *png);
    const int layer = args.intValue("--layer", 0, 0, 1 << 20);
    const int head = args.intValue("--head", 0, 0, 1 << 20);

    const Subject s = args.has("--src")     ? textSubject(args, layer)
                      : args.has("--text")  ? textModelSubject(args, layer)
                      : args.has("--image") ? imageSubject(args, layer)
                                            : unetSubject(args, layer);
    const int heads = static_cast<int>(s.captured.dim(0));
    if (head >= heads)
        throw cli::UsageError("--head: " + std::to_string(head) + " is out of range (" +
                              std::to_string(heads) + " heads, numbered from 0)");
    const int n = static_cast<int>(s.captured.dim(1)), m = static_cast<int>(s.captured.dim(2));
    const int query = parseIndex("--query", *args.value("--query"), s, n);
    int key = 0;
    if (args.value("--key") == "argmax") {
        Eigen::Index best = 0;
        s.captured.slice2d({head}).row(query).maxCoeff(&best);
        key = static_cast<int>(best);
    } else {
        key = parseIndex("--key", *args.value("--key"), s, m);
    }
    const NeuronTerms t = neuronTerms(s.inputs, head, query, key);
    const double captured = s.captured.at({head, query, key});

    std::cout << s.kind << ", layer " << layer << ", head " << head << ": query " << query << " ("
              << s.queryLabels[size_t(query)] << ") → key " << key << " (" << s.keyLabels[size_t(key)]
              << ")\n";
    for (const QString& line : ui::neuronArithmetic(t))
        std::cout << "  " << line.toStdString() << "\n";
    std::cout << "  the model's own pass: " << captured << "\n";

    if (const auto out = args.value("--json")) {
        Json rows = Json::array();
        for (double v : t.rowScores)
            rows.push_back(std::isfinite(v) ? Json(v) : Json(nullptr));
        writeJsonFile(*out, Json{{"model", s.model},
                                 {"kind", s.kind},
                                 {"layer", layer},
                                 {"head", head},
                                 {"query", {{"index", query}, {"label", s.queryLabels[size_t(query)]}}},
                                 {"key", {{"index", key}, {"label", s.keyLabels[size_t(key)]}}},
                                 {"head_dim", t.headDim},
                                 {"q", vectorJson(t.q)},
                                 {"k", vectorJson(t.k)},
                                 {"product", vectorJson(t.product)},
                                 {"dot", t.dot},
                                 {"scale", t.scale},
                                 {"scaled", t.scaled},
                                 {"masked", t.masked},
                                 {"row_scores", rows},
                                 {"row_max", t.rowMax},
                                 {"partition", t.partition},
                                 {"weight", t.weight},
                                 {"captured_weight", captured}});
    }
    if (const auto png = args.value("--png")) {
        cli::ensureGuiApplication();
        ui::NeuronChartText text;
        text.where = QString::fromStdString(s.kind + ", layer " + std::to_string(layer) + ", head " +
                                            std::to_string(head));
        text.query = QString::fromStdString(s.queryLabels[size_t(query)]);
        text.key = QString::fromStdString(s.keyLabels[size_t(key)]);
        text.captured = captured;
        text.sortByContribution = args.has("--sort");
        if (!ui::renderNeuronChart(t, text, 900).save(QString::fromStdString(*png)))
            throw Error("cannot write " + *png);
    }
    return 0;
}

const cli::Registration regNeuron{
    "neuron",
    "[--model DIR] --layer L --head H --query Q --key K|argmax [--json OUT] [--png OUT] [--sort] "
    "(--src \"Satz\" [--kind encoder|decoder|cross] | --text \"text\" | --image IMG | --sample X.npy "
    "--timestep T "
    "[--class C])",
    "one attention score taken apart: the head's query and key vectors, their products per dimension, q·k, "
    "÷√d_k "
    "and the softmax weight (layers, heads and tokens numbered from 0)",
    &runNeuron};

} // namespace
