#pragma once
// What every text family's loader and forward share (core/models/text_models.cpp, llama_model.cpp): the
// checkpoint with its name prefix, and the checks on ids and lengths that give the Text page and the CLI one
// message each.

#include "core/io/tensor_file.h"
#include "core/io/weight_binder.h"
#include "core/models/text_models.h"
#include "core/ops/nn.h"
#include "core/util/callbacks.h"

#include <filesystem>
#include <span>
#include <string>
#include <utility>

namespace attnlens {

// The checkpoint of a text folder (single file or shards) and the prefix its tensors carry: `prefix` when it
// has prefix + probe, "" when it has probe alone (a tensor every checkpoint of the family has); otherwise
// not this family's (attnlens::Error naming the file, the family and the probe).
std::pair<TensorFile, std::string> openTextCheckpoint(const std::filesystem::path& dir,
                                                      const std::string& probe, const std::string& prefix,
                                                      const std::string& family, const Callbacks& callbacks);

// A weight [out, in] in its stored format: bf16 / f16 stay 16-bit (ops/half_linear.h), float32 a view.
LinearWeights storedLinear(WeightBinder& w, const std::string& name, int64_t out, int64_t in, Tensor bias);

// "<what>: token id N is outside the vocabulary of V".
void checkTokenIds(std::span<const int> ids, int vocab, const std::string& what);

// `token`'s LogitDirection (core/models/text_models.h) through a final norm and an LM head, the norm's scale
// frozen at finalRow [D]. Throws (attnlens::Error) for a token outside the head.
LogitDirection normLogitDirection(std::span<const float> finalRow, const Norm& norm,
                                  const LinearWeights& head, int token);

// "the text is too long: N tokens, the model has P positions" past the model's positions.
void checkTextLength(int64_t tokens, int64_t positions);

} // namespace attnlens
