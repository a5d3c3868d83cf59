// attnlens-cli translate [--model DIR] [--beam N] [--max-new-tokens N] [--json OUT] "Satz"
// stdout: the translation. OUT: source, tokens, ids, translation and every attention head
// (encoder [L][H][S][S], decoder [L][H][T][T], cross [L][H][T][S]; decoder row t is the step that
// produced target_ids[t], i.e. decoder input = [start] + target_ids[:-1]).

#include "cli_common.h"

#include "core/decode/decode_session.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/marian_folder.h"

#include <iostream>

namespace {

using attnlens::Json;
using attnlens::Tensor;

// A rank-4 tensor as nested JSON arrays [a][b][c][d].
Json nested4(const Tensor& t) {
    Json out = Json::array();
    if (t.rank() != 4) return out;
    for (int64_t a = 0; a < t.dim(0); ++a) {
        Json ja = Json::array();
        for (int64_t b = 0; b < t.dim(1); ++b) {
            const auto m = t.slice2d({a, b});
            Json jb = Json::array();
            for (Eigen::Index r = 0; r < m.rows(); ++r)
                jb.push_back(std::vector<float>(m.row(r).data(), m.row(r).data() + m.cols()));
            ja.push_back(std::move(jb));
        }
        out.push_back(std::move(ja));
    }
    return out;
}

int runTranslate(const std::vector<std::string>& argv) {
    const cli::Args args(argv, {"--model", "--beam", "--max-new-tokens", "--json"});
    const std::string& text = args.single("the sentence to translate");
    const auto dir = args.value("--model") ? std::filesystem::path(*args.value("--model"))
                                           : attnlens::builtinModelDir("marian-de-en-tiny");
    attnlens::DecodeOptions options;
    if (args.has("--beam")) options.numBeams = args.intValue("--beam", 1, 1, 64);
    if (args.has("--max-new-tokens")) options.maxNewTokens = args.intValue("--max-new-tokens", 1, 1, 100000);
    const auto folder = attnlens::loadMarianFolder(dir);
    attnlens::DecodeSession session(folder.model, folder.tokenizer, text, options);
    session.run();
    const auto trace = session.trace();
    std::cout << trace->translation << "\n";
    if (const auto out = args.value("--json")) {
        Json j = {{"source", trace->source},
                  {"source_tokens", trace->sourceTokens},
                  {"source_ids", trace->sourceIds},
                  {"target_tokens", trace->targetTokens},
                  {"target_ids", trace->targetIds},
                  {"translation", trace->translation},
                  {"attentions",
                   {{"encoder", nested4(trace->encoderAttention)},
                    {"decoder", nested4(trace->decoderAttention)},
                    {"cross", nested4(trace->crossAttention)}}}};
        attnlens::writeJsonFile(*out, j);
    }
    return 0;
}

const cli::Registration reg{"translate", "[--model DIR] [--beam N] [--max-new-tokens N] [--json OUT] \"Satz\"",
                            "translate German to English with a Marian model; every attention head to JSON",
                            &runTranslate};

} // namespace
