#pragma once
// What the lens suites (test_logit_lens, test_kv_rerun) share: a text fixture's model — tests/data/llm
// folders carry no tokenizer, so the model alone; tests/data/text folders through their own loader — and a
// few ids spread over its vocabulary.

#include "core/models/llama_model.h"
#include "core/models/text_folder.h"

#include <QString>

#include <filesystem>
#include <memory>
#include <vector>

namespace lenstest {

inline std::shared_ptr<const attnlens::TextModel> load(const QString& folder) {
    const auto dir = std::filesystem::path(ATTNLENS_TEST_DATA) / folder.toStdString();
    if (folder.startsWith("llm/")) return attnlens::LlamaModel::load(dir);
    return attnlens::loadTextFolder(dir).model;
}

inline std::vector<int> sampleIds(const attnlens::TextModel& m, int n) {
    std::vector<int> ids;
    for (int i = 0; i < n; ++i)
        ids.push_back((7 + 37 * i) % m.vocabSize());
    return ids;
}

} // namespace lenstest
