// File → Open from Hugging Face cache… offscreen: the dialog lists every cached model repository with its
// revision, size, type and whether it opens (why not, in one line), filters by name, and a double-click gives
// the snapshot folder, which MainWindow hands to the page of its kind.

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
        HfCacheDialog dialog(nullptr, hub);
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
        HfCacheDialog empty(nullptr, hub / "none");
        QCOMPARE(empty.table()->rowCount(), 0);
        QVERIFY(empty.findChild<QLabel*>("cacheLabel")->text().contains("No models"));
    }
};

QTEST_MAIN(TestHfCacheDialog)
#include "test_hf_cache_dialog.moc"
