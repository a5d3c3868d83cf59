// attnlens-cli on Llama-style folders (tests/data/llm) and real tokenizer files: `text --json` carries the
// engine's attention [L][H][T][T] (H = query heads) and logits, `--generate` the greedy ids; `tokenize`
// prints one token a line and writes {"ids", "tokens"} equal to Hugging Face's Rust library (the Mistral
// golden), from a folder that holds only tokenizer files; bad folders exit 2 with one "error:" line.

#include "core/io/json_file.h"
#include "core/io/npy_reader.h"
#include "core/models/llama_model.h"
#include "core/models/text_folder.h"
#include "support/cli_run.h"

#include <QFileInfo>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

using namespace attnlens;

namespace {

const QString kLlm = QStringLiteral(ATTNLENS_TEST_DATA "/llm");

} // namespace

class TestCliLlm : public QObject {
    Q_OBJECT
private slots:
    void textJsonIsTheEngines() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("run.json");
        const auto r = clitest::run({"text", "--model", kLlm + "/llama-gqa", "--generate", "5", "--logits",
                                     "--json", out, "Hi there"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json j = readJsonFile(out.toStdString());
        QCOMPARE(j["model_type"].get<std::string>(), std::string("llama"));
        const auto ids = j["ids"].get<std::vector<int>>();
        const auto folder = loadTextFolder((kLlm + "/llama-gqa").toStdString());
        QCOMPARE(ids, folder.encode("Hi there").ids);
        const TextForward f = folder.forward(ids);
        QCOMPARE(j["attentions"].size(), size_t(2));
        QCOMPARE(j["attentions"][0].size(), size_t(8)); // query heads
        QVERIFY(std::abs(j["attentions"][1][5][3][2].get<double>() - f.attentions.at({1, 5, 3, 2})) < 1e-6);
        QVERIFY(std::abs(j["logits"][2][7].get<double>() - f.logits(2, 7)) < 1e-5);
        // greedy through the cache == argmax of one pass over everything before
        std::vector<int> all = ids;
        for (int g : j["generated_ids"].get<std::vector<int>>()) {
            const TextForward step = folder.forward(all);
            Eigen::Index best = 0;
            step.logits.row(step.logits.rows() - 1).maxCoeff(&best);
            QCOMPARE(g, static_cast<int>(best));
            all.push_back(g);
        }
        QCOMPARE(j["generated_ids"].size(), size_t(5)); // this model's eos ids (2, 3) do not come up here
    }

    // Sampling: the same seed gives the same text; top-k 1 is greedy; the settings need --generate.
    void sampling() {
        auto ids = [&](const QStringList& extra) {
            QTemporaryDir tmp;
            const auto r = clitest::run(QStringList{"text", "--model", kLlm + "/llama-gqa", "--generate", "8",
                                                    "--json", tmp.filePath("o.json")} +
                                        extra + QStringList{"Hi there"});
            if (r.exitCode != 0) qWarning("%s", qPrintable(r.err));
            return readJsonFile(tmp.filePath("o.json").toStdString())["generated_ids"]
                .get<std::vector<int>>();
        };
        const auto greedy = ids({});
        const auto a = ids({"--temperature", "1.5", "--seed", "3"});
        QCOMPARE(ids({"--temperature", "1.5", "--seed", "3"}), a);
        QVERIFY(ids({"--temperature", "1.5", "--seed", "4"}) != a);
        QVERIFY(a != greedy);
        QCOMPARE(ids({"--temperature", "1.5", "--top-k", "1", "--seed", "9"}), greedy);
        clitest::expectError(clitest::run({"text", "--model", kLlm + "/llama-gqa", "--seed", "3", "x"}),
                             "--seed needs --generate N");
        clitest::expectError(
            clitest::run({"text", "--model", kLlm + "/llama-gqa", "--generate", "2", "--top-p", "1.5", "x"}),
            "--top-p: 1.5 is out of range");
    }

    // text --heatmap draws the Text page's scales: the log scale and the ignored first column change the
    // picture; the options need --heatmap; a bad scale is one error.
    void textHeatmapScales() {
        QTemporaryDir tmp;
        const QString text = QStringLiteral("The cat sat on the mat. The dog sat too.");
        auto draw = [&](const QString& name,
                        const QStringList& extra) { // the image, null when the run failed
            const QString path = tmp.filePath(name);
            const auto r =
                clitest::run(QStringList{"text", "--heatmap", path, "--layer", "1", "--head", "0"} + extra +
                             QStringList{text});
            if (r.exitCode != 0 || r.crashed) qWarning("%s", qPrintable(r.err));
            return r.exitCode == 0 && !r.crashed ? QImage(path) : QImage();
        };
        const QImage linear = draw("linear.png", {});
        const QImage log = draw("log.png", {"--scale", "log"});
        const QImage ignored = draw("ignored.png", {"--scale", "log", "--ignore-first"});
        QVERIFY(!linear.isNull() && !log.isNull() && !ignored.isNull() && linear.width() > 100);
        QVERIFY(linear != log);
        QVERIFY(log != ignored);
        const QString svg = tmp.filePath("clip.svg");
        QCOMPARE(clitest::run({"text", "--heatmap", svg, "--scale", "clip", text}).exitCode, 0);
        QVERIFY(QFileInfo(svg).size() > 1000);
        clitest::expectError(
            clitest::run({"text", "--heatmap", tmp.filePath("x.png"), "--scale", "cubic", text}),
            "--scale: expected linear, log or clip");
        clitest::expectError(clitest::run({"text", "--ignore-first", text}), "only applies with --heatmap");
        clitest::expectError(clitest::run({"text", "--heatmap", tmp.filePath("x.png"), "--layer", "9", text}),
                             "--layer");
    }

    // One head of a text, written as NPY, is the same map whether every head was captured or the text's
    // attention was kept on demand (--capture-budget 0: nothing fits); the JSON of every head is refused
    // then.
    void oneHeadOnDemand() {
        QTemporaryDir tmp;
        const QString text = QStringLiteral("The cat sat on the mat. The dog sat too.");
        const QString model = QStringLiteral(ATTNLENS_TEST_DATA "/llm/llama-gqa");
        auto head = [&](const QString& name, const QStringList& extra) {
            const QString path = tmp.filePath(name);
            const auto r = clitest::run(QStringList{"text", "--model", model, "--npy", path, "--layer", "1"} +
                                        extra + QStringList{text});
            if (r.exitCode != 0 || r.crashed) qWarning("%s", qPrintable(r.err));
            return readNpy(path.toStdString()).toVector();
        };
        const auto captured = head("a.npy", {"--head", "3"});
        const auto onDemand = head("b.npy", {"--head", "3", "--capture-budget", "0"});
        QVERIFY(captured.size() > 100 && captured == onDemand);
        QVERIFY(head("c.npy", {"--head", "max"}) ==
                head("d.npy", {"--head", "max", "--capture-budget", "0"}));
        const auto folder = loadTextFolder(model.toStdString());
        const auto ids = folder.encode(text.toStdString(), false).ids;
        const RowMatrix direct = folder.forward(ids).attentions.slice2d({1, 3});
        QVERIFY(std::equal(captured.begin(), captured.end(), direct.data()));
        clitest::expectError(clitest::run({"text", "--model", model, "--json", tmp.filePath("x.json"),
                                           "--capture-budget", "0", text}),
                             "--json: every head of");
        clitest::expectError(clitest::run({"text", "--npy", tmp.filePath("x.png"), text}), "expected a .npy");
        clitest::expectError(clitest::run({"text", "--npy", tmp.filePath("x.npy"), "--scale", "log", text}),
                             "only applies with --heatmap");
    }

    void tokenizeRealFiles() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("ids.json");
        const Json golden = readJsonFile(std::string(ATTNLENS_TEST_DATA) + "/tokenizers/mistral/golden.json");
        const Json& c = golden["cases"][3];
        const auto r =
            clitest::run({"tokenize", "--model", QStringLiteral(ATTNLENS_TOKENIZERS_DIR "/mistral"), "--json",
                          out, QString::fromStdString(c["text"].get<std::string>())});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json j = readJsonFile(out.toStdString());
        QCOMPARE(j["ids"].get<std::vector<int>>(), c["ids"].get<std::vector<int>>());
        QCOMPARE(r.out.trimmed().split('\n').size(), qsizetype(c["ids"].size()));
        QCOMPARE(r.out.split('\n').front(), QString("<s>"));
        const auto plain = clitest::run({"tokenize", "--plain", "--model",
                                         QStringLiteral(ATTNLENS_TOKENIZERS_DIR "/mistral"), "--json", out,
                                         QString::fromStdString(c["text"].get<std::string>())});
        QCOMPARE(readJsonFile(out.toStdString())["ids"].get<std::vector<int>>(),
                 c["ids_no_special"].get<std::vector<int>>());
        QVERIFY(plain.exitCode == 0);
    }

    // --chat: the text as a user turn of the chat template (Qwen3's real one), tokenized without BOS; the
    // generated text follows the rendered prompt; folders without a template say so (exit 2).
    void chat() {
        const auto r = clitest::run(
            {"tokenize", "--chat", "--model", QStringLiteral(ATTNLENS_TOKENIZERS_DIR "/qwen3"), "Hi there"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out.split('\n').mid(0, 4), QStringList({"<|im_start|>", "user", "Ċ", "Hi"}));
        QVERIFY(r.out.trimmed().endsWith("assistant\nĊ"));
        const auto text =
            clitest::run({"text", "--chat", "--generate", "2", "--model", kLlm + "/llama-gqa", "Hi"});
        QVERIFY2(text.exitCode == 0, qPrintable(text.err));
        QVERIFY(text.out.startsWith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
        clitest::expectError(clitest::run({"tokenize", "--chat", "--model",
                                           QStringLiteral(ATTNLENS_TOKENIZERS_DIR "/mistral"), "x"}),
                             "has no chat template");
        clitest::expectError(clitest::run({"text", "--chat", "--model", kLlm + "/gemma3", "x"}),
                             "no chat template");
        clitest::expectError(
            clitest::run({"tokenize", "--chat", "--plain", "--model", kLlm + "/gemma3", "x"}), "not both");
    }

    // inspect says what the engine reads: GQA, head_dim, rope, windows, tied; a folder it cannot open is
    // still described, with the reason.
    void inspectAndBench() {
        QTemporaryDir tmp;
        const auto r =
            clitest::run({"inspect", "--model", kLlm + "/gemma3", "--json", tmp.filePath("i.json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("4 query heads, 1 key/value head (multi-query), head_dim 32, q/k norm"));
        QVERIFY(r.out.contains("window:       4 tokens in layers [0,1]"));
        const Json a = readJsonFile(tmp.filePath("i.json").toStdString())["attention"];
        QCOMPARE(a["kv_heads"].get<int>(), 1);
        QCOMPARE(a["rope"]["local_theta"].get<double>(), 10000.0);
        QVERIFY(a["tied_embeddings"].get<bool>());
        const auto sharded = clitest::run({"inspect", "--model", kLlm + "/llama-sharded"});
        QVERIFY(sharded.out.contains("model.safetensors.index.json") &&
                sharded.out.contains("(grouped-query)"));
        const auto dynamic = clitest::run({"inspect", "--model", kLlm + "/llama-dynamic"});
        QVERIFY(dynamic.exitCode == 0 && dynamic.out.contains("not opened:") &&
                dynamic.out.contains("'dynamic'"));
        const auto bench = clitest::run({"bench", "--model", kLlm + "/llama-gqa", "--text", "The cat sat",
                                         "--new-tokens", "3", "--repeat", "2"});
        QVERIFY2(bench.exitCode == 0, qPrintable(bench.err));
        const Json b = Json::parse(bench.out.toStdString());
        for (const char* key : {"median_ms", "per_token_ms", "prompt_ms"})
            QVERIFY2(b[key].get<double>() > 0, key);
    }

    void badFolders() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        for (const auto& e : std::filesystem::directory_iterator((kLlm + "/llama-gqa").toStdString()))
            if (e.path().filename() != "tokenizer.json")
                std::filesystem::copy(e.path(), dir / e.path().filename());
        clitest::expectError(clitest::run({"text", "--model", tmp.path(), "x"}),
                             "no tokenizer files (tokenizer.json or tokenizer.model)");
        clitest::expectError(clitest::run({"tokenize", "--model", tmp.path() + "/none", "x"}),
                             "folder not found");
        clitest::expectError(clitest::run({"tokenize", "x"}), "--model DIR is required");
        // A truncated shard: one message naming the file.
        QTemporaryDir sharded;
        const std::filesystem::path s = sharded.path().toStdString();
        for (const auto& e : std::filesystem::directory_iterator((kLlm + "/llama-sharded").toStdString()))
            std::filesystem::copy(e.path(), s / e.path().filename());
        std::filesystem::copy((kLlm + "/llama-gqa/tokenizer.json").toStdString(), s / "tokenizer.json");
        const Json index = readJsonFile(s / "model.safetensors.index.json");
        const auto shard = s / index["weight_map"].begin().value().get<std::string>();
        std::filesystem::resize_file(shard, std::filesystem::file_size(shard) / 2);
        clitest::expectError(clitest::run({"text", "--model", sharded.path(), "x"}),
                             QString::fromStdString(shard.filename().string()));
    }
};

QTEST_GUILESS_MAIN(TestCliLlm)
#include "test_cli_llm.moc"
