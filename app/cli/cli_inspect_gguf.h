#pragma once
// attnlens-cli inspect --model FILE.gguf: a GGUF file's header, architecture, tensor types (the quantisation,
// by parameters) and metadata (cli_inspect_gguf.cpp).

#include <filesystem>
#include <optional>
#include <string>

namespace cli {

int inspectGguf(const std::filesystem::path& path, const std::optional<std::string>& jsonPath);

} // namespace cli
