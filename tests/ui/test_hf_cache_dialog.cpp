// File → Open from Hugging Face cache… offscreen: the dialog lists every cached model repository with its
// revision, size, type and whether it opens (why not, in one line), filters by name, and a double-click gives
// the snapshot folder, which MainWindow hands to the page of its kind. Ollama's models follow, each with its
// GGUF blob's architecture and whether it opens (a qwen2 file with a byte-level vocabulary: yes; no
// vocabulary, a missing blob: why not).

#include "support/waits.h"
#include "ui/shell/hf_cache_dialog.h"

#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace attnlens::ui;
namespace fs = std::filesystem;

namespace {

// ORG/NAME cached as a copy of a fixture folder (files as links into blobs, as huggingface_hub writes them).
void cache(const fs::path& hub, const std::string& org, const std::string& name, const fs::path& fixture) {
    const fs::path repo = hub / ("models--" + org + "--" + name);
    const fs::path snapshot = repo / "snapshots" / "0123456789abcdef";
    fs::create_directories(repo / "refs");
    fs::create_directories(repo / "blobs");
    for (const auto& e : fs::recursive_directory_iterator(fixture)) {
        const fs::path rel = fs::relative(e.path(), fixture);
        if (e.is_directory()) {
            fs::create_directories(snapshot / rel);
            continue;
        }
        const std::string blob = rel.string();
        std::string flat = blob;
        std::replace(flat.begin(), flat.end(), '/', '_');
        fs::copy_file(e.path(), repo / "blobs" / flat);
        fs::create_directories((snapshot / rel).parent_path());
        fs::create_symlink(fs::absolute(repo / "blobs" / flat), snapshot / rel);
    }
    std::ofstream(repo / "refs" / "main") << "0123456789abcdef";
}

} // namespace

class TestHfCacheDialog : public QObject {
    Q_OBJECT
private slots:
    void listsFiltersAndOpens() {
        QTemporaryDir tmp;
        const fs::path hub = tmp.path().toStdString();
        const fs::path data = ATTNLENS_TEST_DATA;
        cache(hub, "someone", "tiny-sd", data / "t2i" / "tiny-pipe");
        cache(hub, "someone", "tiny-gpt2", data / "text" / "gpt2");
        fs::create_directories(hub / "models--someone--broken" / "snapshots" / "aa");
        HfCacheDialog dialog(nullptr, hub, hub / "no-ollama");
        QTableWidget* table = dialog.table();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("someone/broken"));
        QVERIFY(table->item(0, 4)->text().startsWith("no: "));
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("someone/tiny-gpt2"));
        QCOMPARE(table->item(1, 3)->text(), QStringLiteral("gpt2"));
        QVERIFY(table->item(1, 4)->text().startsWith("yes"));
        QCOMPARE(table->item(2, 3)->text(), QStringLiteral("StableDiffusionPipeline"));
        QVERIFY2(table->item(2, 4)->text().contains("text-to-image"), qPrintable(table->item(2, 4)->text()));
        QVERIFY(dialog.findChild<QLabel*>("cacheLabel")->text().contains("3 model"));
        dialog.findChild<QLineEdit*>("filter")->setText("SD");
        QVERIFY(table->isRowHidden(0) && table->isRowHidden(1) && !table->isRowHidden(2));
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        const QPoint cell = table->visualItemRect(table->item(2, 0)).center();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell);
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, {},
                           table->visualItemRect(table->item(2, 0)).center());
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(dialog.chosenName(), QStringLiteral("someone/tiny-sd"));
        QVERIFY(fs::exists(fs::path(dialog.chosenFolder().toStdString()) / "model_index.json"));
        HfCacheDialog empty(nullptr, hub / "none", hub / "no-ollama");
        QCOMPARE(empty.table()->rowCount(), 0);
        QVERIFY(empty.findChild<QLabel*>("cacheLabel")->text().contains("No models"));
    }

    void ollamaModelsFollow() {
        QTemporaryDir tmp;
        const fs::path store = fs::path(tmp.path().toStdString()) / "ollama";
        const fs::path data = ATTNLENS_TEST_DATA;
        auto model = [&](const std::string& name, const std::string& tag, char digit, const fs::path& blob) {
            const std::string hex(64, digit);
            fs::create_directories(store / "manifests" / "registry.ollama.ai" / "library" / name);
            std::ofstream(store / "manifests" / "registry.ollama.ai" / "library" / name / tag)
                << "{\"layers\": [{\"mediaType\": \"application/vnd.ollama.image.model\", \"digest\": "
                   "\"sha256:"
                << hex << "\", \"size\": 1000}]}"; // (no raw string: moc would not parse the file)
            if (!blob.empty()) {
                fs::create_directories(store / "blobs");
                fs::copy_file(blob, store / "blobs" / ("sha256-" + hex));
            }
        };
        model("qwen2.5", "0.5b", 'a', data / "gguf" / "qwen2-bias.q8_0.gguf");
        model("quants", "latest", 'b', data / "gguf" / "quants.gguf");
        model("smollm", "latest", 'c', {});
        HfCacheDialog dialog(nullptr, fs::path(tmp.path().toStdString()) / "no-hub", store);
        QTableWidget* table = dialog.table();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("ollama: quants:latest"));
        QVERIFY2(table->item(0, 4)->text().contains("no vocabulary"), qPrintable(table->item(0, 4)->text()));
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("ollama: qwen2.5:0.5b"));
        QCOMPARE(table->item(1, 3)->text(), QStringLiteral("GGUF · qwen2"));
        QVERIFY2(table->item(1, 4)->text().startsWith("yes"), qPrintable(table->item(1, 4)->text()));
        QCOMPARE(table->item(1, 1)->text(), QStringLiteral("aaaaaaaaaaaa"));
        QVERIFY(table->item(2, 4)->text().contains("ollama pull smollm:latest"));
        QVERIFY(dialog.findChild<QLabel*>("cacheLabel")->text().contains("3 Ollama model"));
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            dialog.resize(1000, 260);
            dialog.grab().save(QString::fromLocal8Bit(dir) + "/hf-cache-ollama.png");
        }
        emit table->cellDoubleClicked(1, 0);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(dialog.chosenName(), QStringLiteral("ollama: qwen2.5:0.5b"));
        QCOMPARE(fs::path(dialog.chosenFolder().toStdString()),
                 store / "blobs" / ("sha256-" + std::string(64, 'a')));
    }
};

QTEST_MAIN(TestHfCacheDialog)
#include "test_hf_cache_dialog.moc"
