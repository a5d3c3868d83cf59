// attnlens-cli attention --input IN.json [--json OUT]: the scaled dot-product stages.

#include "cli_common.h"
#include "core/io/json_file.h"
#include "core/ops/attention.h"
#include "core/util/error.h"

#include <iostream>

namespace {

using attnlens::Json;
using attnlens::Tensor;

Tensor matrixFromJson(const Json& j, const std::string& name) {
    if (!j.is_array() || j.empty())
        throw cli::UsageError("input: '" + name + "' must be a non-empty array of rows");
    const size_t cols = j[0].is_array() ? j[0].size() : 0;
    if (cols == 0) throw cli::UsageError("input: '" + name + "' rows must be non-empty arrays of numbers");
    Tensor t({static_cast<int64_t>(j.size()), static_cast<int64_t>(cols)});
    for (size_t r = 0; r < j.size(); ++r) {
        if (!j[r].is_array() || j[r].size() != cols)
            throw cli::UsageError("input: '" + name + "' row " + std::to_string(r) + " has " +
                                  std::to_string(j[r].is_array() ? j[r].size() : 0) + " entries, expected " +
                                  std::to_string(cols));
        for (size_t c = 0; c < cols; ++c) {
            if (!j[r][c].is_number())
                throw cli::UsageError("input: '" + name + "'[" + std::to_string(r) + "][" +
                                      std::to_string(c) + "] is not a number");
            t.at({static_cast<int64_t>(r), static_cast<int64_t>(c)}) = j[r][c].get<float>();
        }
    }
    return t;
}

Json toJson2d(attnlens::ConstMatrixMap m) {
    Json rows = Json::array();
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        Json row = Json::array();
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            row.push_back(m(r, c));
        rows.push_back(std::move(row));
    }
    return rows;
}

// [h, q, k] as [q][k] when there is one head, else [h][q][k].
Json stageToJson(const Tensor& t) {
    if (t.dim(0) == 1) return toJson2d(t.slice2d({0}));
    Json heads = Json::array();
    for (int64_t h = 0; h < t.dim(0); ++h)
        heads.push_back(toJson2d(t.slice2d({h})));
    return heads;
}

int runAttention(const std::vector<std::string>& argv) {
    const cli::Args args(argv, {"--input", "--json"});
    if (!args.positionals().empty())
        throw cli::UsageError("unexpected argument '" + args.positionals()[0] + "'");
    const auto input = args.value("--input");
    if (!input) throw cli::UsageError("--input IN.json is required");
    const Json in = attnlens::readJsonFile(*input);
    if (!in.is_object()) throw cli::UsageError("'" + *input + "': expected a JSON object");
    for (const char* key : {"query", "key", "value"})
        if (!in.contains(key)) throw cli::UsageError("'" + *input + "': missing '" + key + "'");
    const Tensor q = matrixFromJson(in["query"], "query");
    const Tensor k = matrixFromJson(in["key"], "key");
    const Tensor v = matrixFromJson(in["value"], "value");
    std::optional<Tensor> mask;
    if (in.contains("mask") && !in["mask"].is_null()) mask = matrixFromJson(in["mask"], "mask");
    int heads = 1;
    if (in.contains("heads")) {
        if (!in["heads"].is_number_integer() || in["heads"].get<int>() < 1)
            throw cli::UsageError("'" + *input + "': 'heads' must be a positive integer");
        heads = in["heads"].get<int>();
    }
    const auto result = attnlens::multiHeadAttention(q, k, v, mask ? &*mask : nullptr, heads, true);
    const auto& s = *result.stages;
    Json out = {{"heads", heads},
                {"d_k", q.dim(1) / heads},
                {"d_v", v.dim(1) / heads},
                {"scores", stageToJson(s.scores)},
                {"scaled", stageToJson(s.scaled)},
                {"masked", stageToJson(s.masked)},
                {"weights", stageToJson(s.weights)},
                {"output", stageToJson(s.output)},
                {"concat", toJson2d(result.output.matrix())}};
    if (const auto path = args.value("--json")) {
        attnlens::writeJsonFile(*path, out, 1);
    } else {
        std::cout << out.dump(1) << "\n";
    }
    return 0;
}

const cli::Registration regAttention{
    "attention", "--input IN.json [--json OUT]",
    "the scaled dot-product stages (scores, scaled, masked, weights, output) as JSON", &runAttention};

} // namespace
