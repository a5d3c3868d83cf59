// The Hugging Face cache read offline (core/io/hf_cache.h) on a cache laid out as huggingface_hub lays it out
// (blobs, snapshots of symlinks, refs): where the environment puts it, every cached repository with its
// revision and size, ORG/NAME[@REVISION][/SUB] resolved to the snapshot folder, and the CLI's --model taking
// such a name (an uncached one is one error line naming the cache).

#include "core/io/hf_cache.h"
#include "support/cli_run.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace attnlens;
namespace fs = std::filesystem;

namespace {

// A repository ORG/NAME with `files` (path → text) in snapshot `commit`, refs/main → commit when `main`.
void cacheRepo(const fs::path& hub, const std::string& id, const std::string& commit,
               const std::vector<std::pair<std::string, std::string>>& files, bool main = true) {
    std::string folder = "models--" + id;
    folder.replace(folder.find('/'), 1, "--");
    const fs::path repo = hub / folder;
    fs::create_directories(repo / "blobs");
    fs::create_directories(repo / "refs");
    for (const auto& [path, text] : files) {
        const std::string blob = std::to_string(std::hash<std::string>{}(text));
        std::ofstream(repo / "blobs" / blob) << text;
        const fs::path link = repo / "snapshots" / commit / path;
        fs::create_directories(link.parent_path());
        fs::path up; // a file in a sub-folder links one level further up
        const fs::path rel(path);
        for (auto it = rel.begin(); std::next(it) != rel.end(); ++it)
            up /= "..";
        fs::create_symlink(fs::path("../..") / up / "blobs" / blob, link);
    }
    if (main) std::ofstream(repo / "refs" / "main") << commit;
}

} // namespace

class TestHfCache : public QObject {
    Q_OBJECT
private slots:
    void cacheFolderFollowsTheEnvironment() {
        qputenv("HF_HUB_CACHE", "/x/hub");
        QCOMPARE(hfHubCache(), fs::path("/x/hub"));
        qunsetenv("HF_HUB_CACHE");
        qputenv("HUGGINGFACE_HUB_CACHE", "");
        qputenv("HF_HOME", "/y");
        QCOMPARE(hfHubCache(), fs::path("/y/hub"));
        qunsetenv("HF_HOME");
        qputenv("XDG_CACHE_HOME", "/z");
        QCOMPARE(hfHubCache(), fs::path("/z/huggingface/hub"));
        qunsetenv("XDG_CACHE_HOME");
        qputenv("HOME", "/home/u");
        QCOMPARE(hfHubCache(), fs::path("/home/u/.cache/huggingface/hub"));
    }

    void listsAndResolvesCachedRepositories() {
        QTemporaryDir tmp;
        const fs::path hub = tmp.path().toStdString();
        cacheRepo(hub, "org/tiny-llm", "c0ffee", {{"config.json", "{}"}, {"model.safetensors", "12345678"}});
        cacheRepo(hub, "org/tiny-llm", "beef01", {{"config.json", "{\"old\": 1}"}}, false);
        cacheRepo(hub, "nota-ai/bk-sdm-tiny", "abc123",
                  {{"model_index.json", "{}"}, {"unet/config.json", "{}"}}, true);
        std::ofstream(hub / "models--org--tiny-llm" / "refs" / "v1") << "beef01";
        fs::create_directories(hub / "datasets--org--data"); // not a model: not listed
        const auto repos = listHfCache(hub);
        QCOMPARE(repos.size(), size_t(2));
        QCOMPARE(repos[0].id, std::string("nota-ai/bk-sdm-tiny"));
        QCOMPARE(repos[1].id, std::string("org/tiny-llm"));
        QCOMPARE(repos[1].revision, std::string("c0ffee")); // refs/main
        QCOMPARE(repos[1].bytes, uint64_t(2 + 8 + 10));     // every blob, both snapshots'
        const auto main = resolveHfModel("org/tiny-llm", hub);
        QVERIFY(main && fs::exists(*main / "model.safetensors"));
        QCOMPARE(main->filename().string(), std::string("c0ffee"));
        QCOMPARE(resolveHfModel("org/tiny-llm@v1", hub)->filename().string(), std::string("beef01"));
        QCOMPARE(resolveHfModel("org/tiny-llm@beef01", hub)->filename().string(), std::string("beef01"));
        QVERIFY(fs::exists(*resolveHfModel("nota-ai/bk-sdm-tiny/unet", hub) / "config.json"));
        QVERIFY(!resolveHfModel("org/tiny-llm@v2", hub));
        QVERIFY(!resolveHfModel("org/other", hub));
        QVERIFY(!resolveHfModel("nota-ai/bk-sdm-tiny/vae", hub));
        QVERIFY(!resolveHfModel("org/tiny-llm/../../..", hub)); // never outside the snapshot
        QVERIFY(!isHfModelName("/abs/path") && !isHfModelName("plain") && !isHfModelName("./a/b"));
        QVERIFY(isHfModelName("Qwen/Qwen2.5-0.5B") && isHfModelName("a/b@main/text_encoder"));
        QVERIFY(listHfCache(hub / "absent").empty());
    }

    void cliTakesACachedName() {
        QTemporaryDir tmp;
        const fs::path hub = tmp.path().toStdString();
        std::vector<std::pair<std::string, std::string>> files; // a pipeline's tokenizer/ as downloaded
        for (const auto& e :
             fs::directory_iterator(std::string(ATTNLENS_TEST_DATA) + "/t2i/tiny-pipe/tokenizer")) {
            std::ifstream in(e.path());
            files.push_back({"tokenizer/" + e.path().filename().string(),
                             std::string((std::istreambuf_iterator<char>(in)), {})});
        }
        cacheRepo(hub, "someone/tiny-sd", "d00d", files);
        qputenv("HF_HUB_CACHE", tmp.path().toUtf8());
        const auto cached = clitest::run({"tokenize", "--model", "someone/tiny-sd/tokenizer", "a bag"});
        const auto local = clitest::run(
            {"tokenize", "--model", QStringLiteral(ATTNLENS_TEST_DATA "/t2i/tiny-pipe/tokenizer"), "a bag"});
        QVERIFY2(cached.exitCode == 0, qPrintable(cached.err));
        QCOMPARE(cached.out, local.out);
        clitest::expectError(clitest::run({"tokenize", "--model", "someone/absent", "a bag"}),
                             "not in the Hugging Face cache at " + tmp.path());
        qunsetenv("HF_HUB_CACHE");
    }
};

QTEST_GUILESS_MAIN(TestHfCache)
#include "test_hf_cache.moc"
