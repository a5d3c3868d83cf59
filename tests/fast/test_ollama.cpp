// Ollama's model store (core/io/ollama.h) on a store built here as Ollama lays it out: manifests/<registry>/
// <namespace>/<model>/<tag>, blobs/sha256-<hex>. Names resolve as Ollama writes them (library models without
// a namespace, "latest" by default, other namespaces and registries); the listing leaves broken manifests
// out; a missing model, layer or blob is one error saying what to do; `attnlens-cli inspect --model
// ollama:NAME` reads the model's GGUF blob where Ollama keeps it ($OLLAMA_MODELS).

#include "core/io/ollama.h"
#include "core/util/error.h"
#include "support/cli_run.h"
#include "support/error_of.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

using namespace attnlens;

namespace {

const std::string kDigest = "sha256:" + std::string(64, 'a');
const std::string kOther = "sha256:" + std::string(63, 'b') + "c";

void write(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

std::string manifest(const std::string& digest, uint64_t size) {
    return R"({"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": ")" +
           kOther + R"(", "size": 483},
        "layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": ")" +
           digest + R"(", "size": )" + std::to_string(size) +
           R"(}, {"mediaType": "application/vnd.ollama.image.template", "digest": ")" + kOther +
           R"(", "size": 1}]})";
}

// A store: qwen2.5:0.5b (a real GGUF blob), smollm (latest, its blob missing), user/tiny:q8, a model from
// hf.co, a manifest that is not JSON.
std::filesystem::path makeStore(const QTemporaryDir& tmp) {
    const std::filesystem::path dir = tmp.filePath("models").toStdString();
    const std::filesystem::path m = dir / "manifests";
    const auto blob = dir / "blobs" / ("sha256-" + std::string(64, 'a'));
    std::filesystem::create_directories(blob.parent_path());
    std::filesystem::copy_file(std::filesystem::path(ATTNLENS_TEST_DATA) / "gguf" / "qwen2-bias.q8_0.gguf",
                               blob);
    write(m / "registry.ollama.ai" / "library" / "qwen2.5" / "0.5b", manifest(kDigest, 60896));
    write(m / "registry.ollama.ai" / "library" / "smollm" / "latest",
          manifest("sha256:" + std::string(64, 'd'), 9));
    write(m / "registry.ollama.ai" / "user" / "tiny" / "q8", manifest(kDigest, 60896));
    write(m / "hf.co" / "org" / "repo" / "Q4_K_M", manifest(kDigest, 60896));
    write(m / "registry.ollama.ai" / "library" / "broken" / "latest", "{not json");
    return dir;
}

} // namespace

class TestOllama : public QObject {
    Q_OBJECT
private slots:
    void namesResolveAsOllamaWritesThem() {
        QTemporaryDir tmp;
        const auto dir = makeStore(tmp);
        const OllamaModel q = findOllamaModel(dir, "qwen2.5:0.5b");
        QCOMPARE(q.name, std::string("qwen2.5:0.5b"));
        QCOMPARE(q.model, dir / "blobs" / ("sha256-" + std::string(64, 'a')));
        QCOMPARE(q.bytes, uint64_t(60896));
        QVERIFY(q.present);
        QCOMPARE(findOllamaModel(dir, "library/qwen2.5:0.5b").model, q.model);
        QCOMPARE(findOllamaModel(dir, "registry.ollama.ai/library/qwen2.5:0.5b").model, q.model);
        QCOMPARE(findOllamaModel(dir, "user/tiny:q8").name, std::string("user/tiny:q8"));
        QCOMPARE(findOllamaModel(dir, "hf.co/org/repo:Q4_K_M").name, std::string("hf.co/org/repo:Q4_K_M"));
        // the listing: every readable manifest, by name; the broken one left out
        std::vector<std::string> names;
        for (const OllamaModel& m : listOllamaModels(dir))
            names.push_back(m.name + (m.present ? "" : " (missing)"));
        QCOMPARE(names, (std::vector<std::string>{"hf.co/org/repo:Q4_K_M", "qwen2.5:0.5b",
                                                  "smollm:latest (missing)", "user/tiny:q8"}));
        QVERIFY(listOllamaModels(dir / "absent").empty());
    }

    void whatIsMissingIsSaid() {
        QTemporaryDir tmp;
        const auto dir = makeStore(tmp);
        const QString absent = errorOf([&] { findOllamaModel(dir, "llama3.2"); });
        QVERIFY2(absent.contains("no model 'llama3.2:latest'") && absent.contains("qwen2.5:0.5b") &&
                     absent.contains("ollama pull llama3.2:latest"),
                 qPrintable(absent));
        QVERIFY(errorOf([&] { findOllamaModel(dir, "smollm"); }).contains("is missing"));
        QVERIFY(errorOf([&] { findOllamaModel(dir, "broken"); }).contains("not an Ollama manifest"));
        QVERIFY(errorOf([&] { findOllamaModel(dir, "../x"); }).contains("no model name"));
        // Fields of the wrong type are a clear refusal, not a JSON exception (fuzz_ollama found a number
        // digest).
        write(
            dir / "manifests" / "registry.ollama.ai" / "library" / "typed" / "latest",
            R"({"layers": [{"mediaType": 7}, {"mediaType": "application/vnd.ollama.image.model", "digest": 20}]})");
        QVERIFY(errorOf([&] { findOllamaModel(dir, "typed"); }).contains("is no sha256 digest"));
        (void)listOllamaModels(dir);
        QCOMPARE(resolveModelReference("some/folder"), std::filesystem::path("some/folder"));
    }

    void inspectReadsTheBlob() {
        QTemporaryDir tmp;
        const auto dir = makeStore(tmp);
        qputenv("OLLAMA_MODELS", QByteArray::fromStdString(dir.string()));
        QCOMPARE(ollamaModelsDir(), dir);
        const auto r = clitest::run({"inspect", "--model", "ollama:qwen2.5:0.5b"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("GGUF v3") && r.out.contains("architecture: qwen2"));
        const auto missing = clitest::run({"inspect", "--model", "ollama:smollm"});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY(missing.err.startsWith("error: ollama: the model file of 'smollm:latest'"));
        qunsetenv("OLLAMA_MODELS");
    }
};

QTEST_GUILESS_MAIN(TestOllama)
#include "test_ollama.moc"
