// attnlens-cli diff: difference maps (issue 22, M12) of two attention exports we write — A, B and A − B with
// the rows and columns matched (core/analysis/attention_diff.h), summary numbers, the picture and the data.
//
//   attnlens-cli diff A.json B.json [--kind encoder|decoder|cross] [--layer L|NAME] [--head H|mean|max|min]
//                     [--out DIFF.png] [--json DIFF.json] [--colormap NAME]
//
// Reads: the Translate page's JSON export (its "matrix" as shown, or with --kind/--layer/--head one matrix of
// its "tensors"), `translate --json` (default: cross-attention, the last layer, mean of heads), `text --json`
// and the Text page's export (BERT / GPT-2: rows and columns the tokens), `vision --json` (tokens CLS, "patch
// R,C") and `unet --json` (--layer: index in execution order or module path;
// tokens "pixel Y,X"). A and B may be of different inputs, steps or models; rows and columns are matched by
// position when their tokens agree, else by token, and what has no partner is listed. stdout: the summary.
// DIFF.json: {"a", "b" (what each is), "rows", "columns" (A's labels of the matched axes), "row_match",
// "column_match" ("position" | "token"), "unmatched": {"rows_a", "rows_b", "columns_a", "columns_b"}, "a",
// "b_values", "diff" ([rows][columns], diff = A − B), "max_abs_diff", "js_divergence": {"rows": [...] (null:
// undefined), "mean"}}. DIFF.png: ui/render/difference_image.

#include "cli_common.h"
#include "cli_heatmap.h"
#include "cli_overlay.h"
#include "core/analysis/attention_diff.h"
#include "core/analysis/attention_maps.h"
#include "core/io/json_file.h"
#include "core/util/error.h"
#include "ui/render/difference_image.h"

#include <charconv>
#include <cmath>
#include <iostream>

namespace {

using namespace attnlens;

struct Selection {
    std::optional<std::string> kind, layer, head;
};

// Nested [L][H][Q][K] JSON arrays → a Tensor.
Tensor tensor4(const Json& j, const std::string& what) {
    if (!j.is_array() || j.empty() || !j[0].is_array() || j[0].empty() || !j[0][0].is_array() ||
        j[0][0].empty() || !j[0][0][0].is_array())
        throw Error(what + ": expected [layers][heads][queries][keys] arrays");
    const int64_t L = j.size(), H = j[0].size(), Q = j[0][0].size(), K = j[0][0][0].size();
    Tensor t({L, H, Q, K});
    float* out = t.data();
    for (const auto& l : j)
        for (const auto& h : l) {
            if (static_cast<int64_t>(h.size()) != Q) throw Error(what + ": ragged arrays");
            for (const auto& q : h) {
                if (!q.is_array() || static_cast<int64_t>(q.size()) != K)
                    throw Error(what + ": ragged arrays");
                for (const auto& v : q)
                    *out++ = v.get<float>();
            }
        }
    return t;
}

// One [Q, K] matrix of an [L, H, Q, K] tensor: the layer (default last) and heads (default mean).
RowMatrix pick(const Tensor& t, const Selection& s, std::string& described) {
    const int layers = static_cast<int>(t.dim(0));
    int layer = layers - 1;
    if (s.layer) {
        const auto [ptr, ec] = std::from_chars(s.layer->data(), s.layer->data() + s.layer->size(), layer);
        if (ec != std::errc() || ptr != s.layer->data() + s.layer->size() || layer < 0 || layer >= layers)
            throw cli::UsageError("--layer: expected 0.." + std::to_string(layers - 1) + ", got '" +
                                  *s.layer + "'");
    }
    const HeadSelection heads = cli::parseHead(s.head.value_or("mean"), static_cast<int>(t.dim(1)));
    described +=
        " · layer " + std::to_string(layer) + " · " +
        (heads.head >= 0 ? "head " + std::to_string(heads.head) : std::string(s.head.value_or("mean")));
    return layerAttention(t, layer, heads);
}

std::vector<std::string> strings(const Json& j) {
    return j.get<std::vector<std::string>>();
}

// Text exports: the kind's labels from the tokens.
void textLabels(const std::string& kind, const std::vector<std::string>& source,
                const std::vector<std::string>& target, std::vector<std::string> decoderInputs,
                LabelledMatrix& m) {
    if (decoderInputs.empty()) {
        decoderInputs.push_back("<start>");
        if (!target.empty()) decoderInputs.insert(decoderInputs.end(), target.begin(), target.end() - 1);
    }
    m.rows = kind == "encoder" ? source : target;
    m.columns = kind == "cross" || kind == "encoder" ? source : decoderInputs;
    // The page's snapshot lists the next step's input too: keep the inputs the matrix has columns for.
    if (kind == "decoder" && static_cast<Eigen::Index>(m.columns.size()) > m.values.cols())
        m.columns.resize(static_cast<size_t>(m.values.cols()));
}

// The Translate page's export: its view's matrix, or one kind's tensor.
LabelledMatrix readTranslatePageExport(const Json& j, const std::string& path, const Selection& s,
                                       std::string& described) {
    LabelledMatrix m;
    const std::vector<std::string> source = strings(j.at("source_tokens")),
                                   target = strings(j.at("target_tokens"));
    if (!(s.kind || s.layer || s.head)) {
        m.rows = strings(j["matrix"].at("rows"));
        m.columns = strings(j["matrix"].at("columns"));
        const auto values = j["matrix"].at("values").get<std::vector<std::vector<float>>>();
        m.values.resize(static_cast<Eigen::Index>(values.size()),
                        values.empty() ? 0 : static_cast<Eigen::Index>(values[0].size()));
        for (size_t r = 0; r < values.size(); ++r) {
            if (values[r].size() != size_t(m.values.cols())) throw Error(path + ": ragged matrix");
            for (size_t c = 0; c < values[r].size(); ++c)
                m.values(Eigen::Index(r), Eigen::Index(c)) = values[r][c];
        }
        described += " (the view: " + j["selection"].value("kind", std::string("?")) + ")";
        return m;
    }
    const std::string kind = s.kind.value_or("cross");
    const char* key = kind == "encoder" ? "encoder_self" : kind == "decoder" ? "decoder_self" : "cross";
    const Json& t = j["tensors"].at(key);
    const auto shape = t.at("shape").get<std::vector<int64_t>>();
    if (shape.size() != 4) throw Error(path + ": tensors." + key + " is not [L, H, Q, K]");
    const Tensor tensor(shape, t.at("data").get<std::vector<float>>());
    described += " · " + kind;
    m.values = pick(tensor, s, described);
    textLabels(kind, source, target,
               j.contains("decoder_input_tokens") ? strings(j["decoder_input_tokens"])
                                                  : std::vector<std::string>{},
               m);
    return m;
}

// unet --json: one attention layer (--layer by name or number; the last by default) over its pixels.
LabelledMatrix readUnetExport(const Json& a, const std::string& path, const Selection& s,
                              std::string& described) {
    LabelledMatrix m;
    size_t index = a.size() - 1;
    if (s.layer) {
        bool found = false;
        for (size_t i = 0; i < a.size(); ++i)
            if (a[i].value("name", std::string()) == *s.layer || std::to_string(i) == *s.layer) {
                index = i;
                found = true;
            }
        if (!found) throw cli::UsageError("--layer: no attention layer '" + *s.layer + "' in " + path);
    }
    const Json& layer = a[index];
    const auto spatial = layer.at("spatial").get<std::vector<int>>();
    const Json w = Json::array({layer.at("weights")});
    Selection one = s;
    one.layer.reset();
    described += " · " + layer.value("name", std::string("layer"));
    m.values = pick(tensor4(w, path), one, described);
    for (int y = 0; y < spatial.at(0); ++y)
        for (int x = 0; x < spatial.at(1); ++x)
            m.rows.push_back("pixel " + std::to_string(y) + "," + std::to_string(x));
    m.columns = m.rows;
    return m;
}

LabelledMatrix readExport(const std::string& path, const Selection& s, std::string& described) {
    const Json j = readJsonFile(path);
    LabelledMatrix m;
    described = std::filesystem::path(path).filename().string();
    if (j.contains("matrix") && j.contains("tensors")) return readTranslatePageExport(j, path, s, described);
    if (!j.contains("attentions"))
        throw Error(path + ": not an attention export of attnlens (no \"attentions\" or \"matrix\")");
    const Json& a = j["attentions"];
    if (a.is_object()) { // translate --json
        const std::string kind = s.kind.value_or("cross");
        if (kind != "encoder" && kind != "decoder" && kind != "cross")
            throw cli::UsageError("--kind: expected encoder, decoder or cross, got '" + kind + "'");
        described += " · " + kind;
        m.values = pick(tensor4(a.at(kind), path), s, described);
        textLabels(kind, strings(j.at("source_tokens")), strings(j.at("target_tokens")), {}, m);
        return m;
    }
    if (s.kind) throw cli::UsageError("--kind applies to translations only");
    if (j.contains("model_type") && j.contains("tokens")) { // text --json, the Text page's export
        m.values = pick(tensor4(a, path), s, described);
        m.rows = strings(j.at("tokens"));
        m.columns = m.rows;
        if (static_cast<Eigen::Index>(m.rows.size()) != m.values.rows())
            throw Error(path + ": " + std::to_string(m.rows.size()) + " tokens for " +
                        std::to_string(m.values.rows()) + " attention rows");
        return m;
    }
    if (a.is_array() && !a.empty() && a[0].is_object()) return readUnetExport(a, path, s, described);
    // vision --json
    m.values = pick(tensor4(a, path), s, described);
    const auto grid = j.at("grid").get<std::vector<int>>();
    m.rows.push_back("CLS");
    for (int r = 0; r < grid.at(0); ++r)
        for (int c = 0; c < grid.at(1); ++c)
            m.rows.push_back("patch " + std::to_string(r) + "," + std::to_string(c));
    m.columns = m.rows;
    return m;
}

Json matrixJson(const RowMatrix& m) {
    Json rows = Json::array();
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        rows.push_back(std::vector<float>(m.row(r).data(), m.row(r).data() + m.cols()));
    return rows;
}

int runDiff(const std::vector<std::string>& argv) {
    const cli::Args args(argv, {"--kind", "--layer", "--head", "--out", "--json", "--colormap"});
    if (args.positionals().size() != 2) throw cli::UsageError("give two attention exports: A.json B.json");
    if (const auto out = args.value("--out")) cli::checkHeatmapPath("--out", *out);
    const ColorMap map = cli::parseColorMapOption(args, ColorMap::Viridis);
    const Selection s{args.value("--kind"), args.value("--layer"), args.value("--head")};
    std::string whatA, whatB;
    const LabelledMatrix a = readExport(args.positionals()[0], s, whatA);
    const LabelledMatrix b = readExport(args.positionals()[1], s, whatB);
    const AttentionDiff d = diffAttention(a, b);
    std::cout << "A: " << whatA << "\nB: " << whatB << "\n";
    for (const QString& line : ui::differenceSummary(d))
        std::cout << line.toStdString() << "\n";

    if (const auto path = args.value("--json")) {
        Json js = Json::array();
        for (double v : d.rowJs)
            js.push_back(std::isnan(v) ? Json(nullptr) : Json(v));
        writeJsonFile(
            *path, Json{{"a", whatA},
                        {"b", whatB},
                        {"rows", d.rowLabels},
                        {"columns", d.columnLabels},
                        {"row_match", axisMatchName(d.rows.how)},
                        {"column_match", axisMatchName(d.columns.how)},
                        {"unmatched",
                         {{"rows_a", d.rowsOnlyA},
                          {"rows_b", d.rowsOnlyB},
                          {"columns_a", d.columnsOnlyA},
                          {"columns_b", d.columnsOnlyB}}},
                        {"a_values", matrixJson(d.a)},
                        {"b_values", matrixJson(d.b)},
                        {"diff", matrixJson(d.diff)},
                        {"max_abs_diff", d.maxAbs},
                        {"js_divergence",
                         {{"rows", js}, {"mean", std::isnan(d.meanJs) ? Json(nullptr) : Json(d.meanJs)}}}});
    }
    if (const auto out = args.value("--out")) {
        cli::ensureGuiApplication();
        ui::DifferenceText text{QString::fromStdString(whatA), QString::fromStdString(whatB),
                                QStringLiteral("query"), QStringLiteral("key")};
        if (!ui::renderDifference(d, text, ui::defaultHeatmapStyle(), map).save(QString::fromStdString(*out)))
            throw Error("cannot write " + *out);
    }
    return 0;
}

const cli::Registration regDiff{
    "diff",
    "A.json B.json [--kind encoder|decoder|cross] [--layer L|NAME] [--head H|mean|max|min] [--out DIFF.png] "
    "[--json DIFF.json] [--colormap NAME]",
    "difference of two attention exports (translate, text, vision, unet, the Translate and Text pages'): A, "
    "B and A − B "
    "with rows "
    "and columns matched by position or token, max |Δ| and the Jensen–Shannon divergence of matched rows",
    &runDiff};

} // namespace
