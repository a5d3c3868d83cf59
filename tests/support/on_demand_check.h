#pragma once
// The on-demand attention check every text family's suite runs (issue 40): a pass whose capture exceeds the
// budget keeps its attention on demand, and every (layer, head) map made from it equals the captured pass's
// bit for bit — from an empty cache, and for several new tokens after a cached prefix (decoders), with heads
// switched off.

#include "core/models/text_models.h"

#include <QTest>

#include <cstring>
#include <span>
#include <string>

namespace texttest {

// Returns an empty string when every map is equal, else what differs.
inline std::string compareOnDemand(const attnlens::TextForward& captured,
                                   const attnlens::TextForward& recalled) {
    using namespace attnlens;
    if (captured.onDemand || captured.attentions.empty()) return "the captured pass kept nothing";
    if (!recalled.onDemand || !recalled.attentions.empty())
        return "the over-budget pass did not go on demand";
    const auto store = recalled.attentionStore();
    const Tensor& a = captured.attentions;
    if (store->layers() != a.dim(0) || store->heads() != a.dim(1) || store->rows() != a.dim(2) ||
        store->cols() != a.dim(3))
        return "shapes differ";
    for (int l = 0; l < a.dim(0); ++l)
        for (int h = 0; h < a.dim(1); ++h) {
            const RowMatrix map = store->head(l, h);
            if (std::memcmp(map.data(), a.sub({l, h}).data(), sizeof(float) * size_t(map.size())) != 0)
                return "layer " + std::to_string(l) + " head " + std::to_string(h) + " differs";
        }
    return {};
}

// forward() captured and on demand (budget 0), with heads `off` switched off; then, for decoders, the last
// three ids after a cached prefix.
inline void checkOnDemand(const attnlens::TextModel& model, std::span<const int> ids,
                          const attnlens::HeadList& off) {
    using namespace attnlens;
    RunControls captured, recalled;
    captured.offHeads = recalled.offHeads = off;
    recalled.captureBudget = 0;
    const std::string whole =
        compareOnDemand(model.forward(ids, false, captured), model.forward(ids, false, recalled));
    QVERIFY2(whole.empty(), whole.c_str());
    if (!model.decoderOnly() || ids.size() < 4) return;
    const size_t split = ids.size() - 3;
    TextCache c1 = model.newCache(), c2 = model.newCache();
    model.extend(ids.first(split), c1, false, false, captured);
    model.extend(ids.first(split), c2, false, false, captured);
    const std::string tail = compareOnDemand(model.extend(ids.subspan(split), c1, false, false, captured),
                                             model.extend(ids.subspan(split), c2, false, false, recalled));
    QVERIFY2(tail.empty(), ("after a cached prefix: " + tail).c_str());
}

} // namespace texttest
