// attnlens-cli contract (docs/architecture.md): exit 0 on success; exit 2 with exactly one "error: ..." line
// on stderr for bad input or usage; never a crash or a signal. Covers the foundation commands: attention and
// inspect.

#include "core/io/json_file.h"
#include "core/io/safetensors.h"
#include "support/cli_run.h"

#include <QFloat16> // qCompare overloads: nlohmann::json conversions need qfloat16 complete
#include <QTest>

using namespace attnlens;

namespace {

using clitest::Run;

Run runCli(const QStringList& args) {
    return clitest::run(args);
}

void expectUsageError(const Run& r, const QString& needle) {
    clitest::expectError(r, needle);
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void attentionJson();
    void attentionBadInput_data();
    void attentionBadInput();
    void attentionValueWidth();
    void inspect();
    void usage();
    void everySubcommandHasHelp();
    void threadsOnEverySubcommand();

private:
    QString write(const QString& name, const QByteArray& bytes) {
        QFile f(m_dir.filePath(name));
        f.open(QIODevice::WriteOnly);
        f.write(bytes);
        return f.fileName();
    }
    QTemporaryDir m_dir;
};

void TestCli::attentionJson() {
    const QString in = write("in.json", R"({"query": [[1,0,0,1],[0,1,1,0],[1,1,0,0]],
        "key": [[1,0,0,1],[0,1,1,0],[1,1,0,0]], "value": [[1,2,3,4],[5,6,7,8],[9,10,11,12]],
        "mask": [[1,0,0],[1,1,0],[1,1,1]], "heads": 2})");
    const QString out = m_dir.filePath("out.json");
    const Run r = runCli({"attention", "--input", in, "--json", out});
    QVERIFY(!r.crashed);
    QCOMPARE(r.exitCode, 0);
    const Json j = readJsonFile(out.toStdString());
    for (const char* key : {"scores", "scaled", "masked", "weights", "output"}) {
        QVERIFY2(j.contains(key), key);
        QCOMPARE(j[key].size(), size_t(2)); // per head when heads > 1
        QCOMPARE(j[key][0].size(), size_t(3));
    }
    QCOMPARE(j["weights"][0][0].size(), size_t(3));
    QCOMPARE(j["output"][0][0].size(), size_t(2));      // d_k = 4 / 2
    QCOMPARE(j["weights"][1][0][1].get<double>(), 0.0); // causal mask
    QCOMPARE(j["weights"][1][0][0].get<double>(), 1.0);
    QCOMPARE(j["masked"][0][0][2].get<double>(), -1e9);
    // Without --json the same object goes to stdout.
    const Run r2 = runCli({"attention", "--input", in});
    QCOMPARE(r2.exitCode, 0);
    QCOMPARE(Json::parse(r2.out.toStdString())["weights"], j["weights"]);
}

void TestCli::attentionBadInput_data() {
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("needle");
    QTest::newRow("malformed JSON") << QByteArray("{\"query\": [[1,2]") << "malformed JSON";
    // Regression (same bug as the safetensors header's, found by fuzzing): a number past double's range
    // escaped readJsonFile as nlohmann's out_of_range instead of the malformed-JSON error.
    QTest::newRow("number overflow") << QByteArray(R"({"query": [[1e999]], "key": [[1]], "value": [[1]]})")
                                     << "malformed JSON";
    QTest::newRow("missing key") << QByteArray(R"({"query": [[1]], "value": [[1]]})") << "missing 'key'";
    QTest::newRow("ragged rows") << QByteArray(R"({"query": [[1,2],[3]], "key": [[1,2]], "value": [[1,2]]})")
                                 << "row 1";
    QTest::newRow("not numbers") << QByteArray(R"({"query": [["a"]], "key": [[1]], "value": [[1]]})")
                                 << "not a number";
    QTest::newRow("width mismatch") << QByteArray(
                                           R"({"query": [[1,2]], "key": [[1,2,3]], "value": [[1,2,3]]})")
                                    << "columns";
    QTest::newRow("heads do not divide")
        << QByteArray(R"({"query": [[1,2,3]], "key": [[1,2,3]], "value": [[1,2,3]], "heads": 2})") << "heads";
    QTest::newRow("heads do not divide d_v")
        << QByteArray(R"({"query": [[1,2]], "key": [[1,2]], "value": [[1,2,3]], "heads": 2})")
        << "value width d_v = 3";
    QTest::newRow("bad mask shape")
        << QByteArray(R"({"query": [[1,2]], "key": [[1,2]], "value": [[1,2]], "mask": [[1,1]]})") << "mask";
    QTest::newRow("zero heads") << QByteArray(
                                       R"({"query": [[1,2]], "key": [[1,2]], "value": [[1,2]], "heads": 0})")
                                << "heads";
    QTest::newRow("empty") << QByteArray(R"({"query": [], "key": [[1]], "value": [[1]]})") << "query";
}

void TestCli::attentionBadInput() {
    QFETCH(QByteArray, input);
    QFETCH(QString, needle);
    expectUsageError(runCli({"attention", "--input", write("bad.json", input)}), needle);
}

// V narrower or wider than Q and K (d_v != d_k): the output and each head's output follow V's width.
void TestCli::attentionValueWidth() {
    const QString in = write("dv.json", R"({"query": [[0,0],[1,0]], "key": [[1,0],[0,1]],
        "value": [[1,2,3,4,5,6],[7,8,9,10,11,12]], "heads": 2})");
    const QString out = m_dir.filePath("dv-out.json");
    const Run r = runCli({"attention", "--input", in, "--json", out});
    QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(r.err));
    const Json j = readJsonFile(out.toStdString());
    QCOMPARE(j["output"].size(), size_t(2));        // per head
    QCOMPARE(j["output"][0].size(), size_t(2));     // queries
    QCOMPARE(j["output"][0][0].size(), size_t(3));  // d_v / heads
    QCOMPARE(j["weights"][0][0].size(), size_t(2)); // keys
    // query 0 is zero: head 0 averages its value columns [0, 3) of both keys
    QCOMPARE(j["output"][0][0][0].get<double>(), 4.0);
}

void TestCli::inspect() {
    const QString model = m_dir.filePath("model");
    QDir().mkpath(model);
    write("model/config.json", R"({"model_type": "vit", "architectures": ["ViTForImageClassification"],
        "hidden_size": 4, "num_hidden_layers": 1, "id2label": {"0": "a", "1": "b"}})");
    writeSafeTensors((model + "/model.safetensors").toStdString(),
                     {{"w", Tensor({2, 3}), DType::F16}, {"b", Tensor({3}), DType::F32}});
    const QString out = m_dir.filePath("inspect.json");
    const Run r = runCli({"inspect", "--model", model, "--json", out});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("ViTForImageClassification"));
    const Json j = readJsonFile(out.toStdString());
    QCOMPARE(j["tensor_count"].get<int>(), 2);
    QCOMPARE(j["parameter_count"].get<int>(), 9);
    QCOMPARE(j["dtypes"]["F16"].get<int>(), 1);
    QCOMPARE(j["sizes"]["num_labels"].get<int>(), 2);

    expectUsageError(runCli({"inspect", "--model", m_dir.filePath("missing")}), "not a model folder");
    expectUsageError(runCli({"inspect"}), "--model DIR is required");
    QFile::remove(model + "/config.json");
    expectUsageError(runCli({"inspect", "--model", model}), "config.json is missing");
    write("model/config.json", R"({"model_type": "vit"})");
    write("model/model.safetensors", "garbage");
    expectUsageError(runCli({"inspect", "--model", model}), "model.safetensors");
}

void TestCli::usage() {
    expectUsageError(runCli({"frobnicate"}), "unknown command 'frobnicate'");
    expectUsageError(runCli({"attention", "--input"}), "--input needs a value");
    expectUsageError(runCli({"attention", "--bogus", "1"}), "unknown option '--bogus'");
    const Run none = runCli({});
    QCOMPARE(none.exitCode, 2);
    const Run help = runCli({"--help"});
    QCOMPARE(help.exitCode, 0);
    QVERIFY(help.out.contains("attention") && help.out.contains("inspect"));
}

// `SUB --help`: "options:" with a line "  --flag …  description" for every --flag of the usage line, and
// "examples:" with at least one "attnlens-cli SUB …" line.
static void checkOptionsDescribed(const QString& command, const QString& help) {
    const QStringList lines = help.split('\n');
    const QString usage = lines.value(0);
    const int options = static_cast<int>(lines.indexOf("options:")),
              examples = static_cast<int>(lines.indexOf("examples:"));
    QVERIFY2(options > 0 && examples > options, qPrintable(help));
    QStringList described;
    for (int i = options + 1; i < examples; ++i)
        if (lines[i].startsWith("  --")) {
            const QString flag = lines[i].trimmed().section(' ', 0, 0);
            // the description: the rest of this line, or the next line when the flag column overflowed
            const QString rest =
                lines[i].mid(2 + flag.size()).trimmed().size() > 0 ? lines[i] : lines.value(i + 1);
            QVERIFY2(rest.trimmed().size() > flag.size() + 10, qPrintable(command + ": " + lines[i]));
            described << flag;
        }
    static const QRegularExpression flagPattern(QStringLiteral("--[a-z][a-z0-9-]*"));
    for (auto m = flagPattern.globalMatch(usage); m.hasNext();) {
        const QString flag = m.next().captured();
        QVERIFY2(described.contains(flag), qPrintable(command + ": " + flag + " is not described:\n" + help));
    }
    QVERIFY2(examples + 1 < lines.size() && lines[examples + 1].startsWith("  attnlens-cli " + command + " "),
             qPrintable(help));
}

// Every subcommand the top-level help lists answers --help and -h with its own usage on stdout, exit 0,
// even among other (possibly wrong) arguments; --version and -V exit 0. The help describes every option its
// usage names, one line each (issue 38: it was the usage line alone), and gives examples of the command.
void TestCli::everySubcommandHasHelp() {
    const Run help = runCli({"--help"});
    QCOMPARE(help.exitCode, 0);
    QStringList commands;
    for (const QString& line :
         help.out.split('\n')) // "  name usage…" (the summary lines are indented deeper)
        if (line.startsWith("  ") && !line.startsWith("   ")) commands << line.trimmed().section(' ', 0, 0);
    QVERIFY2(commands.size() >= 8, qPrintable(help.out));
    for (const QString& command : commands)
        for (const QStringList& args : {QStringList{command, "--help"}, QStringList{command, "-h"},
                                        QStringList{command, "--bogus", "--help"}}) {
            const Run r = runCli(args);
            QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(args.join(' ') + ": " + r.err));
            QVERIFY2(r.out.startsWith("usage: attnlens-cli " + command + " "), qPrintable(r.out));
            QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
            checkOptionsDescribed(command, r.out);
        }
    for (const char* flag : {"--version", "-V"}) {
        const Run v = runCli({flag});
        QCOMPARE(v.exitCode, 0);
        QVERIFY(v.out.startsWith("attnlens-cli "));
    }
}

// --threads N (or --threads=N) is every subcommand's: bench reports the team it ran on; a value outside
// 1..1024 or no number is exit 2 with one "error:" line; every subcommand's help describes it.
void TestCli::threadsOnEverySubcommand() {
    for (const QStringList& threads : {QStringList{"--threads", "2"}, QStringList{"--threads=3"}}) {
        const Run r =
            runCli(QStringList{"bench", "--image", QString(ATTNLENS_TEST_DATA) + "/vit/images/grey_13x9.png",
                               "--repeat", "1", "--warmup", "0"} +
                   threads);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json j = Json::parse(r.out.toStdString());
        QCOMPARE(j["threads"].get<int>(), threads.size() == 2 ? 2 : 3);
    }
    for (const QString& bad : {"0", "1025", "two", "", "2x"}) {
        const Run r = runCli({"attention", "--threads", bad, "--input", "in.json"});
        QVERIFY2(!r.crashed && r.exitCode == 2, qPrintable(bad + ": " + r.err));
        QVERIFY2(r.err.startsWith("error: --threads wants a whole number 1..1024"), qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);
    }
    const QString in = write("threads.json", R"({"query": [[1,0],[0,1]], "key": [[1,0],[0,1]],
        "value": [[1,2],[3,4]], "heads": 1})");
    const Run ok = runCli({"attention", "--input", in, "--threads", "1"});
    QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));
    const Run help = runCli({"tokenize", "--help"});
    QVERIFY2(help.out.contains("  --threads N "), qPrintable(help.out));
}

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
