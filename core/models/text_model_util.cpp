#include "core/models/text_model_util.h"

#include "core/io/model_folder.h"
#include "core/util/error.h"

#include <vector>

namespace attnlens {

std::pair<TensorFile, std::string> openTextCheckpoint(const std::filesystem::path& dir,
                                                      const std::string& probe, const std::string& prefix,
                                                      const std::string& family, const Callbacks& callbacks) {
    callbacks.report(0.0, "reading the checkpoint");
    TensorFile file = TensorFile::open(findWeightsFile(dir, "model"));
    if (file.contains(prefix + probe)) return {std::move(file), prefix};
    if (!file.contains(probe))
        throw Error("'" + file.path().string() + "': not a " + family + " checkpoint (no " + probe +
                    ", with or without '" + prefix + "')");
    return {std::move(file), ""};
}

LinearWeights storedLinear(WeightBinder& w, const std::string& name, int64_t out, int64_t in, Tensor bias) {
    auto s = w.requireStored(name, {out, in});
    return {std::move(s.f32), std::move(bias), {}, std::move(s.half)};
}

void checkTokenIds(std::span<const int> ids, int vocab, const std::string& what) {
    for (int id : ids)
        if (id < 0 || id >= vocab)
            throw Error(what + ": token id " + std::to_string(id) + " is outside the vocabulary of " +
                        std::to_string(vocab));
}

LogitDirection normLogitDirection(std::span<const float> finalRow, const Norm& norm,
                                  const LinearWeights& head, int token) {
    const auto d = static_cast<int64_t>(finalRow.size());
    if (token < 0 || token >= head.outFeatures())
        throw Error("token id " + std::to_string(token) + " is outside the vocabulary of " +
                    std::to_string(head.outFeatures()));
    if (head.inFeatures() != d || norm.weight.numel() != d)
        throw Error("logit direction: a stream row of " + std::to_string(d) + " for a head of " +
                    std::to_string(head.inFeatures()));
    std::vector<float> u(static_cast<size_t>(d));
    head.rowInto(token, u.data());
    LogitDirection out;
    out.constant = head.bias.empty() ? 0.0f : head.bias.data()[token];
    out.direction = norm.frozenTranspose(u, finalRow, out.constant);
    return out;
}

void checkTextLength(int64_t tokens, int64_t positions) {
    if (tokens > positions)
        throw Error("the text is too long: " + std::to_string(tokens) + " tokens, the model has " +
                    std::to_string(positions) + " positions");
}

} // namespace attnlens
