#pragma once
// The Hugging Face cache as transformers and diffusers leave it (huggingface_hub's layout), read offline:
//   HUB/models--ORG--NAME/refs/main              the commit a branch or tag points at
//   HUB/models--ORG--NAME/snapshots/COMMIT/...   the files, as symlinks into ../../blobs/
//   HUB/models--ORG--NAME/blobs/SHA              the contents
// HUB is $HF_HUB_CACHE (or the older $HUGGINGFACE_HUB_CACHE), else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub — as huggingface_hub finds it.
//
//   auto dir = resolveHfModel("Qwen/Qwen2.5-0.5B");            // its main snapshot, if cached
//   auto unet = resolveHfModel("nota-ai/bk-sdm-tiny/unet");    // a folder inside the repository
//   for (const CachedRepo& r : listHfCache()) …                // every cached model repository
//
// Nothing is downloaded, ever. Thread-safety: free functions reading the file system.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// The hub cache folder the environment names (it may not exist).
std::filesystem::path hfHubCache();

struct CachedRepo {
    std::string id;                 // "ORG/NAME"
    std::string revision;           // the commit of refs/main, else of the newest snapshot
    std::filesystem::path snapshot; // HUB/models--ORG--NAME/snapshots/COMMIT (empty: no snapshot)
    uint64_t bytes = 0;             // the blobs' size on disk
};

// Every model repository in the cache (sorted by id); an absent cache is empty.
std::vector<CachedRepo> listHfCache(const std::filesystem::path& hub = hfHubCache());

// Whether `name` reads as "ORG/NAME[@REVISION][/SUB/FOLDER]" (hub characters; no "." or ".." parts).
bool isHfModelName(std::string_view name);

// "ORG/NAME", "ORG/NAME@REVISION" (a branch, tag or commit) or either followed by "/SUB/FOLDER": the folder
// in the cached snapshot, or nullopt when the text is no such name or the repository (revision, folder) is
// not cached.
std::optional<std::filesystem::path> resolveHfModel(std::string_view name,
                                                    const std::filesystem::path& hub = hfHubCache());

} // namespace attnlens
