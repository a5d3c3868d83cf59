#include "core/io/hf_cache.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>

namespace attnlens {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
}

std::string readRef(const fs::path& file) {
    std::ifstream in(file);
    std::string commit;
    in >> commit;
    return commit;
}

// The snapshot a revision names: refs/REVISION's commit, or a snapshot named by the commit itself.
std::optional<fs::path> snapshotOf(const fs::path& repo, const std::string& revision) {
    std::error_code ec;
    const std::string commit = readRef(repo / "refs" / revision);
    for (const std::string& c : {commit, revision})
        if (!c.empty() && fs::is_directory(repo / "snapshots" / c, ec)) return repo / "snapshots" / c;
    return std::nullopt;
}

// refs/main's snapshot, else the most recently written one.
std::optional<fs::path> defaultSnapshot(const fs::path& repo) {
    if (auto main = snapshotOf(repo, "main")) return main;
    std::error_code ec;
    std::optional<fs::path> newest;
    fs::file_time_type newestTime{};
    for (const auto& e : fs::directory_iterator(repo / "snapshots", ec))
        if (e.is_directory(ec) && (!newest || e.last_write_time(ec) > newestTime)) {
            newest = e.path();
            newestTime = e.last_write_time(ec);
        }
    return newest;
}

uint64_t blobBytes(const fs::path& repo) {
    std::error_code ec;
    uint64_t bytes = 0;
    for (const auto& e : fs::directory_iterator(repo / "blobs", ec))
        if (e.is_regular_file(ec)) bytes += e.file_size(ec);
    return bytes;
}

} // namespace

fs::path hfHubCache() {
    if (const std::string hub = env("HF_HUB_CACHE"); !hub.empty()) return hub;
    if (const std::string hub = env("HUGGINGFACE_HUB_CACHE"); !hub.empty()) return hub;
    if (const std::string home = env("HF_HOME"); !home.empty()) return fs::path(home) / "hub";
    if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty())
        return fs::path(xdg) / "huggingface" / "hub";
    return fs::path(env("HOME")) / ".cache" / "huggingface" / "hub";
}

std::vector<CachedRepo> listHfCache(const fs::path& hub) {
    std::vector<CachedRepo> repos;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(hub, ec)) {
        const std::string folder = e.path().filename().string();
        if (!e.is_directory(ec) || folder.rfind("models--", 0) != 0) continue;
        CachedRepo r;
        r.id = folder.substr(8);
        if (const auto sep = r.id.find("--"); sep != std::string::npos) r.id.replace(sep, 2, "/");
        if (const auto snapshot = defaultSnapshot(e.path())) {
            r.snapshot = *snapshot;
            r.revision = snapshot->filename().string();
        }
        r.bytes = blobBytes(e.path());
        repos.push_back(std::move(r));
    }
    std::sort(repos.begin(), repos.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return repos;
}

namespace {

// ORG/NAME[@REVISION][/SUB/FOLDER]: names as the hub allows them (letters, digits, - _ .), no "." / ".."
// parts.
bool matchName(std::string_view name, std::cmatch& m) {
    static const std::regex pattern(R"(([A-Za-z0-9][\w.\-]*)/([\w.\-]+)(@[\w.\-]+)?((/[\w.\-]+)*)/?)");
    if (!std::regex_match(name.data(), name.data() + name.size(), m, pattern)) return false;
    for (const auto& part : fs::path(std::string(name)))
        if (part == "." || part == "..") return false;
    return true;
}

} // namespace

bool isHfModelName(std::string_view name) {
    std::cmatch m;
    return matchName(name, m);
}

std::optional<fs::path> resolveHfModel(std::string_view name, const fs::path& hub) {
    std::cmatch m;
    if (!matchName(name, m)) return std::nullopt;
    const fs::path repo = hub / ("models--" + m[1].str() + "--" + m[2].str());
    const auto snapshot = m[3].matched ? snapshotOf(repo, m[3].str().substr(1)) : defaultSnapshot(repo);
    if (!snapshot) return std::nullopt;
    fs::path dir = *snapshot;
    if (m[4].length() > 0) dir /= m[4].str().substr(1);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return std::nullopt;
    return dir;
}

} // namespace attnlens
