// attnlens-cli heads: what every head does, as numbers (core/analysis/head_stats.h), for one input or
// averaged over a batch — sentences for a Marian model, pictures for a ViT.
//
//   attnlens-cli heads [--model DIR] (--src "Satz" | --src-file F | --text "text" | --text-file F | --image
//   IMG
//                      | --image-dir D) [--stat entropy|distance|sink|diagonal|previous|alignment] [--json
//                      OUT]
//                      [--importance]
//
// Text (Marian, default the built-in marian-de-en-tiny): every sentence translated greedily; statistics of
// the encoder self-attention, the masked decoder self-attention and the cross-attention. Distance in tokens;
// sinks:
// </s> for the encoder and cross-attention, the start token for the decoder.
// Texts (BERT / GPT-2, default the built-in llama-en-tiny; --text-file: one text per line): kind "encoder"
// (BERT) or "decoder" (GPT-2); distance in tokens; sinks: [CLS] and [SEP] for BERT, the first token for
// GPT-2.
// --importance (texts): also "importance" [L][H], the drop of the output's log-probability with each head
// alone off (GPT-2: the text's next tokens; BERT: the top prediction at each [MASK], else the text's own
// tokens; a BertModel without LM head: the relative change of the last hidden state), averaged over the
// texts, and "importance_measure" saying which. Images (ViT, default the built-in vit-fashion-mnist):
// distance in pixels of the model input between patch centres (CLS has no position); sink: CLS. stdout: per
// attention kind, the --stat (default entropy) as a layers × heads table (rows = layers from 0).
// --json OUT: {"model", "inputs", "kinds": {KIND: {"layers", "heads", "rows", STAT: [[L][H]], …}}} with null
// where a statistic does not apply (diagonal of cross-attention, alignment without one).
// --align "0-0 1-2 …" (with --src) / --align-file A (with --src-file, one line per sentence): a word
// alignment in Pharaoh format between the source words and the words of the model's greedy translation (word
// = a "▁" piece and the pieces after it; specials are words; from 0), e.g. from fast_align run on the
// outputs; the cross- attention's "alignment" is then the share of aligned target pieces whose argmax source
// piece is aligned. Diffusion (--sample X.npy --timestep T [--class C]; default the built-in
// ddpm-fashion-tiny): one U-Net forward; kind "unet", rows = attention layers in execution order (their names
// in "layer_names"), columns = heads of the widest layer (null for heads a layer lacks); distance in pixels
// of the sample; no sinks.

#include "cli_common.h"
#include "cli_image.h"
#include "cli_text_input.h"
#include "cli_unet_args.h"
#include "core/analysis/attention_captures.h"
#include "core/analysis/head_stats.h"
#include "core/analysis/text_lenses.h"
#include "core/decode/decode_session.h"
#include "core/decode/trace_attention.h"
#include "core/diffusion/unet_maps.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/marian_folder.h"
#include "core/models/vit_model.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

namespace {

using attnlens::AttentionKind;
using attnlens::HeadStatistic;
using attnlens::HeadStats;
using attnlens::HeadStatsBatch;
using attnlens::HeadStatsOptions;
using attnlens::Json;

std::vector<std::string> readSentences(const std::string& path, const std::string& flag = "--src-file") {
    std::ifstream in(path);
    if (!in) throw cli::UsageError(flag + ": cannot read '" + path + "'");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
    }
    if (lines.empty()) throw cli::UsageError(flag + ": '" + path + "' holds no sentence");
    return lines;
}

std::vector<std::filesystem::path> listImages(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw cli::UsageError("--image-dir: '" + dir.string() + "' is not a folder");
    std::vector<std::filesystem::path> images;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        std::string ext = entry.path().extension().string();
        std::transform(ext.begin(), ext.end(), ext.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (entry.is_regular_file() && (ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".bmp" ||
                                        ext == ".webp" || ext == ".tif" || ext == ".tiff"))
            images.push_back(entry.path());
    }
    std::sort(images.begin(), images.end());
    if (images.empty()) throw cli::UsageError("--image-dir: no pictures in '" + dir.string() + "'");
    return images;
}

// NaN (no value: a statistic undefined for that head) written as null.
Json nullableMatrixJson(const attnlens::RowMatrix& m) {
    Json rows = Json::array();
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        Json row = Json::array();
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            row.push_back(std::isnan(m(r, c)) ? Json(nullptr) : Json(m(r, c)));
        rows.push_back(row);
    }
    return rows;
}

void printTable(const std::string& kind, HeadStatistic stat, const HeadStats& s) {
    std::printf("%s %s (rows: layers, columns: heads)\n", kind.c_str(),
                std::string(attnlens::headStatisticId(stat)).c_str());
    std::printf("layer");
    for (int h = 0; h < s.heads(); ++h)
        std::printf("\t%d", h);
    std::printf("\n");
    const auto& m = s.get(stat);
    for (int l = 0; l < s.layers(); ++l) {
        std::printf("%d", l);
        for (int h = 0; h < s.heads(); ++h) {
            if (std::isnan(m(l, h)))
                std::printf("\t-");
            else
                std::printf("\t%.4f", static_cast<double>(m(l, h)));
        }
        std::printf("\n");
    }
}

void printImportance(const std::string& measure, const attnlens::RowMatrix& drop) {
    std::printf("importance: %s drops by (rows: layers, columns: heads)\nlayer", measure.c_str());
    for (Eigen::Index h = 0; h < drop.cols(); ++h)
        std::printf("\t%d", static_cast<int>(h));
    std::printf("\n");
    for (Eigen::Index l = 0; l < drop.rows(); ++l) {
        std::printf("%d", static_cast<int>(l));
        for (Eigen::Index h = 0; h < drop.cols(); ++h)
            std::printf("\t%.4f", static_cast<double>(drop(l, h)));
        std::printf("\n");
    }
}

// The texts' statistics (and with --importance their mean importance) under the kind of the model's
// attention.
struct TextHeads {
    std::string kind;
    HeadStatsBatch batch;
    attnlens::RowMatrix importance; // [L, H] mean over the texts; empty without --importance
    std::string measure;
    int inputs = 0;
};

TextHeads textHeads(const cli::Args& args, const attnlens::TextFolder& folder) {
    const std::vector<std::string> texts = args.has("--text")
                                               ? std::vector<std::string>{*args.value("--text")}
                                               : readSentences(*args.value("--text-file"), "--text-file");
    TextHeads out;
    out.kind = std::string(attnlens::attentionKindId(attnlens::textAttentionKind(folder)));
    for (const std::string& text : texts) {
        const attnlens::TextEncoding e = cli::encodeText(folder, text);
        const attnlens::TextForward f = folder.forward(e.ids, false);
        out.batch.add(attnlens::captureHeadStats(attnlens::textCapture(folder, e.ids, f.attentions),
                                                 attnlens::textAttentionKind(folder)));
        if (args.has("--importance")) {
            const attnlens::TextTargets targets = attnlens::textTargets(folder, e.ids);
            if (targets.tokens.empty() && folder.hasLmHead())
                throw cli::UsageError("--importance: \"" + text + "\" has no token to score");
            const attnlens::RowMatrix drop = attnlens::textHeadImportance(folder, e.ids, targets);
            out.importance = out.importance.size() ? attnlens::RowMatrix(out.importance + drop) : drop;
            if (out.measure.find(targets.description) == std::string::npos)
                out.measure += (out.measure.empty() ? "" : "; ") + targets.description;
        }
        ++out.inputs;
    }
    if (out.importance.size()) out.importance /= static_cast<float>(out.inputs);
    if (texts.size() > 1 && !out.measure.empty()) out.measure += " (mean over the texts)";
    return out;
}

// The statistics of one kind as the JSON writes them ("layers", "heads", "rows", "aligned_rows", one matrix
// per statistic).
Json statsJson(const HeadStats& s) {
    Json k = {
        {"layers", s.layers()}, {"heads", s.heads()}, {"rows", s.rows}, {"aligned_rows", s.alignedRows}};
    for (HeadStatistic st : attnlens::kAllHeadStatistics)
        k[std::string(attnlens::headStatisticId(st))] = nullableMatrixJson(s.get(st));
    return k;
}

// --sample: one U-Net forward, every attention layer (rows of the table in execution order).
int unetHeads(const cli::Args& args, HeadStatistic stat) {
    const attnlens::DiffusionModel model = cli::loadDiffusion(args);
    cli::refuseTextConditioned(model, "heads");
    const cli::UnetInput in = cli::readUnetInput(args, model);
    const attnlens::UNetOutput out =
        model.unet->forward(in.sample, static_cast<float>(in.timestep), in.classLabel);
    const HeadStats s =
        attnlens::captureHeadStats(attnlens::unetCapture(out.attentions, static_cast<int>(in.sample.dim(1)),
                                                         static_cast<int>(in.sample.dim(2))),
                                   AttentionKind::EncoderSelf);
    printTable("unet", stat, s);
    Json names = Json::array();
    for (const auto& a : out.attentions)
        names.push_back(a.info.name);
    Json k = statsJson(s);
    k["layer_names"] = names;
    if (const auto path = args.value("--json"))
        attnlens::writeJsonFile(
            *path,
            Json{{"model", model.folder.dir.filename().string()}, {"inputs", 1}, {"kinds", {{"unet", k}}}});
    return 0;
}

// --image / --image-dir: every picture's statistics, averaged. Returns the pictures.
int vitHeads(const cli::Args& args, const std::filesystem::path& dir,
             std::map<std::string, HeadStatsBatch>& batches) {
    const auto model = attnlens::VitModel::load(dir);
    const std::vector<std::filesystem::path> paths =
        args.has("--image") ? std::vector<std::filesystem::path>{*args.value("--image")}
                            : listImages(*args.value("--image-dir"));
    attnlens::VitRunOptions run;
    run.captureAttention = true;
    for (const auto& path : paths) {
        const attnlens::VitResult r = model->run(cli::loadImageQuietly(path), run);
        batches["vit"].add(attnlens::captureHeadStats(attnlens::vitCapture(r, model->config().patchSize),
                                                      AttentionKind::EncoderSelf));
    }
    return static_cast<int>(paths.size());
}

// --align / --align-file: one word alignment per sentence (empty: none).
std::vector<std::string> readAlignments(const cli::Args& args, size_t sentences) {
    std::vector<std::string> alignments;
    if (const auto a = args.value("--align")) alignments = {*a};
    if (const auto f = args.value("--align-file")) {
        std::ifstream in(*f);
        if (!in) throw cli::UsageError("--align-file: cannot read '" + *f + "'");
        for (std::string line; std::getline(in, line);) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            alignments.push_back(line);
        }
        while (alignments.size() > sentences && alignments.back().empty())
            alignments.pop_back();
        if (alignments.size() != sentences)
            throw cli::UsageError("--align-file: " + std::to_string(alignments.size()) + " lines for " +
                                  std::to_string(sentences) + " sentences (one line per sentence)");
    }
    return alignments;
}

// --src / --src-file: every sentence translated, its encoder, decoder and cross-attention statistics
// averaged.
int marianHeads(const cli::Args& args, const std::filesystem::path& dir,
                std::map<std::string, HeadStatsBatch>& batches) {
    const auto folder = attnlens::loadMarianFolder(dir);
    const std::vector<std::string> sentences = args.has("--src")
                                                   ? std::vector<std::string>{*args.value("--src")}
                                                   : readSentences(*args.value("--src-file"));
    const std::vector<std::string> alignments = readAlignments(args, sentences.size());
    for (size_t n = 0; n < sentences.size(); ++n) {
        attnlens::DecodeSession session(folder.model, folder.tokenizer, sentences[n], {});
        session.run();
        const auto trace = session.trace();
        const attnlens::AttentionCapture capture =
            attnlens::translationCapture(*trace, attnlens::decoderStartPiece(folder));
        for (AttentionKind kind : capture.kinds()) {
            std::vector<std::vector<int>> alignment;
            if (kind == AttentionKind::Cross && !alignments.empty()) {
                try {
                    alignment = attnlens::pieceAlignment(*trace, alignments[n]);
                } catch (const attnlens::Error& e) {
                    throw cli::UsageError("--align: sentence " + std::to_string(n) + " (\"" +
                                          trace->translation + "\"): " + e.what());
                }
            }
            batches[std::string(attnlens::attentionKindId(kind))].add(
                attnlens::captureHeadStats(capture, kind, alignment));
        }
    }
    return static_cast<int>(sentences.size());
}

// The options that go together; returns the statistic the table shows.
HeadStatistic checkHeadsArgs(const cli::Args& args) {
    if ((args.has("--align") && !args.has("--src")) || (args.has("--align-file") && !args.has("--src-file")))
        throw cli::UsageError("--align goes with --src, --align-file with --src-file");
    const bool texts = args.has("--text") || args.has("--text-file");
    int sources = 0;
    for (const char* source :
         {"--src", "--src-file", "--text", "--text-file", "--image", "--image-dir", "--sample"})
        sources += int(args.has(source));
    if (sources != 1)
        throw cli::UsageError(
            "give exactly one of --src, --src-file, --text, --text-file, --image, --image-dir, --sample");
    if (args.has("--importance") && !texts)
        throw cli::UsageError("--importance goes with --text or --text-file");
    if (!args.positionals().empty())
        throw cli::UsageError("unexpected argument '" + args.positionals().front() + "'");
    const std::string statName = args.value("--stat", "entropy");
    const auto stat = attnlens::parseHeadStatistic(statName);
    if (!stat) throw cli::UsageError("--stat: unknown statistic '" + statName + "'");
    return *stat;
}

int runHeads(const std::vector<std::string>& argv) {
    const cli::Args args(argv,
                         {"--model", "--src", "--src-file", "--text", "--text-file", "--image", "--image-dir",
                          "--sample", "--timestep", "--class", "--stat", "--json", "--precision", "--align",
                          "--align-file"},
                         {"--importance"});
    const HeadStatistic stat = checkHeadsArgs(args);
    if (args.has("--sample")) return unetHeads(args, stat);
    const bool texts = args.has("--text") || args.has("--text-file");
    const bool images = args.has("--image") || args.has("--image-dir");
    using attnlens::ModelKind;
    const ModelKind wanted = images ? ModelKind::Vit : texts ? ModelKind::Text : ModelKind::Marian;
    const auto dir = cli::modelDir(args, wanted);
    const auto info = attnlens::inspectModelFolder(dir);
    if (info.kind != wanted)
        throw cli::UsageError("'" + dir.string() + "' is a '" + info.modelType + "' model; " +
                              (images  ? "pictures need a ViT model"
                               : texts ? "--text needs a text model (BERT, GPT-2, Llama-style)"
                               : info.kind == ModelKind::Text ? "give a text model's input with --text"
                                                              : "sentences need a Marian model"));
    cli::applyPrecision(args);

    std::map<std::string, HeadStatsBatch> batches; // kind id → batch
    int inputs = 0;
    TextHeads text;
    if (texts) {
        text = textHeads(args, attnlens::loadTextFolder(dir));
        batches[text.kind] = text.batch;
        inputs = text.inputs;
    } else {
        inputs = images ? vitHeads(args, dir, batches) : marianHeads(args, dir, batches);
    }
    Json kinds = Json::object();
    for (const char* kind : {"encoder", "decoder", "cross", "vit"}) {
        const auto it = batches.find(kind);
        if (it == batches.end()) continue;
        const HeadStats s = it->second.mean();
        printTable(kind, stat, s);
        Json k = statsJson(s);
        if (kind == text.kind && text.importance.size()) {
            printImportance(text.measure, text.importance);
            k["importance"] = nullableMatrixJson(text.importance);
            k["importance_measure"] = text.measure;
        }
        kinds[kind] = k;
    }
    if (const auto out = args.value("--json"))
        attnlens::writeJsonFile(
            *out, Json{{"model", dir.filename().string()}, {"inputs", inputs}, {"kinds", kinds}});
    return 0;
}

const cli::Registration regHeads{
    "heads",
    "[--model DIR] (--src \"Satz\" | --src-file F | --text \"text\" [--importance] | --text-file F "
    "[--importance] | --image IMG | --image-dir D | --sample X.npy --timestep T [--class C]) "
    "[--stat entropy|distance|sink|diagonal|previous|alignment] [--align \"0-0 1-2\" | --align-file A] "
    "[--json OUT] "
    "[--precision fp32|bf16]",
    "what every head does, as numbers: entropy, mean attention distance, share on sink tokens, on the "
    "diagonal and "
    "on the previous token, per layer × head (numbered from 0), for one input or averaged over a batch",
    &runHeads};

} // namespace
