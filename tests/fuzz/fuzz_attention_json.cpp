// libFuzzer target: the playground's JSON input as `attnlens-cli attention --input IN.json` reads it (the
// CLI's own parsing, then the stages). Bad input must end in cli::UsageError or attnlens::Error — the one
// clear "error: …" line — never in another exception, a crash or a hang.
#include "cli_common.h"
#include "core/util/error.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 64 * 1024) return 0; // the stages are O(n²·d): keep single inputs fast
    const fuzz::TempFile file(data, size, "attention.json");
    try {
        cli::registry().at("attention").run({"--input", file.path().string(), "--json", "/dev/null"});
    } catch (const cli::UsageError&) {
    } catch (const attnlens::Error&) {
    }
    return 0;
}
