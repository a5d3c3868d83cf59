// libFuzzer target: a Marian folder's config.json and generation_config.json as MarianConfig::fromFolder
// reads them. The first input byte chooses the file under test: even — config.json is the rest (no generation
// config); odd — config.json is the tiny test model's and generation_config.json is the rest. Any input must
// end in a config or attnlens::Error.
#include "core/models/marian_model.h"
#include "core/util/error.h"
#include "fuzz_file.h"

#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const fuzz::TempDir dir("marian-config");
    if (data[0] % 2 == 0) {
        dir.write("config.json", data + 1, size - 1);
    } else {
        dir.copy(std::filesystem::path(ATTNLENS_FUZZ_MARIAN_DIR) / "config.json", "config.json");
        dir.write("generation_config.json", data + 1, size - 1);
    }
    try {
        (void)attnlens::MarianConfig::fromFolder(dir.path());
    } catch (const attnlens::Error&) {
    }
    return 0;
}
