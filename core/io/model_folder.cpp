#include "core/io/model_folder.h"

#include "core/io/json_file.h"
#include "core/util/error.h"
#include "resource_paths.h" // generated: ATTNLENS_SOURCE_DIR, ATTNLENS_INSTALL_DATADIR

#include <cstdlib>

namespace attnlens {

ModelFolderInfo inspectModelFolder(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw Error("'" + dir.string() + "': not a model folder (directory not found)");
    ModelFolderInfo info;
    info.dir = dir;
    const auto configPath = dir / "config.json";
    if (!std::filesystem::exists(configPath, ec))
        throw Error("'" + dir.string() + "': config.json is missing (expected a Hugging Face model folder)");
    JsonConfig config(configPath);
    info.modelType = config.get<std::string>("model_type");
    if (info.modelType == "marian")
        info.kind = ModelKind::Marian;
    else if (info.modelType == "vit")
        info.kind = ModelKind::Vit;
    else if (info.modelType == "bert" || info.modelType == "gpt2")
        info.kind = ModelKind::Text;
    info.weights = findWeightsFile(dir, "model");
    return info;
}

std::filesystem::path findWeightsFile(const std::filesystem::path& dir, const std::string& stem) {
    std::error_code ec;
    const auto safetensors = dir / (stem + ".safetensors");
    if (std::filesystem::exists(safetensors, ec)) return safetensors;
    const std::string binName = (stem == "model" ? std::string("pytorch_model") : stem) + ".bin";
    if (std::filesystem::exists(dir / binName, ec)) return dir / binName;
    throw Error("'" + dir.string() + "': " + stem + ".safetensors is missing (and so is " + binName + ")");
}

namespace {

std::vector<std::filesystem::path> resourceRoots() {
    std::vector<std::filesystem::path> roots;
    if (const char* env = std::getenv("ATTNLENS_RESOURCES_DIR"); env && *env) roots.emplace_back(env);
    // An installed program finds its data beside it (PREFIX/bin/../share/attnlens), wherever the prefix was
    // chosen at install time (cmake --install --prefix P) and even if it was moved.
    std::error_code ec;
    if (const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec); !ec && exe.has_parent_path())
        roots.emplace_back(exe.parent_path().parent_path() / "share" / "attnlens");
    roots.emplace_back(std::filesystem::path(ATTNLENS_SOURCE_DIR) / "resources");
    roots.emplace_back(std::filesystem::path(ATTNLENS_INSTALL_DATADIR));
    return roots;
}

} // namespace

std::filesystem::path resourcesDir() {
    std::error_code ec;
    for (const auto& root : resourceRoots())
        if (std::filesystem::is_directory(root / "models", ec)) return root;
    throw Error(
        "resources folder not found (looked in $ATTNLENS_RESOURCES_DIR, the source tree and the install "
        "prefix)");
}

std::filesystem::path builtinModelDir(const std::string& name) {
    std::error_code ec;
    for (const auto& root : resourceRoots()) {
        const auto dir = root / "models" / name;
        if (std::filesystem::is_directory(dir, ec)) return dir;
    }
    throw Error("built-in model '" + name +
                "' not found (looked in $ATTNLENS_RESOURCES_DIR/models, the source "
                "tree and the install prefix)");
}

} // namespace attnlens
