#include "ui/shell/hf_cache_dialog.h"

#include "core/io/gguf.h"
#include "core/io/hf_cache.h"
#include "core/io/json_file.h"
#include "core/io/ollama.h"
#include "core/models/text_folder.h"
#include "core/registry/model_registry.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace attnlens::ui {

namespace {

// config.json's model_type, or model_index.json's pipeline class; "" when neither reads.
QString whatItIs(const std::filesystem::path& dir) {
    for (const char* file : {"model_index.json", "config.json"}) {
        try {
            const Json j = readJsonFile(dir / file);
            if (j.contains("_class_name") && j["_class_name"].is_string())
                return QString::fromStdString(j["_class_name"].get<std::string>());
            if (j.contains("model_type") && j["model_type"].is_string())
                return QString::fromStdString(j["model_type"].get<std::string>());
        } catch (const std::exception&) {
        }
    }
    return {};
}

// "yes", or why not in one line.
QString support(const std::filesystem::path& dir) {
    if (dir.empty()) return QObject::tr("no: no snapshot downloaded");
    try {
        const ModelKind kind = detectModelKind(dir);
        if (kind == ModelKind::Unknown) return QObject::tr("no: a model type this build does not read");
        return QObject::tr("yes: %1").arg(QString::fromLatin1(modelKindPurpose(kind).data()));
    } catch (const std::exception& e) { // the snapshot's path is in the table already
        QString why = QString::fromUtf8(e.what());
        why.remove(QStringLiteral("'%1': ").arg(QString::fromStdString(dir.string())));
        return QObject::tr("no: %1").arg(why);
    }
}

// An Ollama model's GGUF blob: its architecture, and "yes" or why not — from its string metadata alone.
std::pair<QString, QString> ggufSupport(const OllamaModel& m) {
    if (!m.present)
        return {QObject::tr("GGUF"), QObject::tr("no: its model file is missing (ollama pull %1)")
                                         .arg(QString::fromStdString(m.name))};
    try {
        const auto keys = GgufFile::peekStrings(m.model);
        const auto get = [&](const char* k) {
            const auto it = keys.find(k);
            return it == keys.end() ? std::string() : it->second;
        };
        const std::string arch = get("general.architecture"), vocab = get("tokenizer.ggml.model");
        const QString type = QObject::tr("GGUF · %1").arg(QString::fromStdString(arch));
        if (const auto why = ggufRefusal(arch, vocab))
            return {type, QObject::tr("no: %1").arg(QString::fromStdString(*why))};
        return {type, QObject::tr("yes: %1").arg(
                          QString::fromLatin1(modelKindPurpose(detectModelKind(m.model)).data()))};
    } catch (const std::exception& e) {
        return {QObject::tr("GGUF"), QObject::tr("no: %1").arg(QString::fromUtf8(e.what()))};
    }
}

} // namespace

HfCacheDialog::HfCacheDialog(QWidget* parent, const std::filesystem::path& hub,
                             const std::filesystem::path& ollama)
    : QDialog(parent) {
    setWindowTitle(tr("Open from Hugging Face cache"));
    auto* layout = new QVBoxLayout(this);
    m_label = new QLabel(this);
    m_label->setObjectName(QStringLiteral("cacheLabel"));
    m_label->setWordWrap(true);
    layout->addWidget(m_label);
    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("filter"));
    m_filter->setPlaceholderText(tr("Filter by name"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, &HfCacheDialog::applyFilter);
    layout->addWidget(m_filter);
    m_table = new QTableWidget(0, 5, this);
    m_table->setObjectName(QStringLiteral("repos"));
    m_table->setHorizontalHeaderLabels(
        {tr("Repository"), tr("Revision"), tr("Size"), tr("Type"), tr("Opens")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { openRow(row); });
    layout->addWidget(m_table, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] { openRow(m_table->currentRow()); });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(900, 480);
    fill(hub.empty() ? hfHubCache() : hub);
    addOllama(ollama.empty() ? ollamaModelsDir() : ollama);
}

void HfCacheDialog::fill(const std::filesystem::path& hub) {
    const auto repos = listHfCache(hub);
    m_label->setText(
        repos.empty()
            ? tr("No models in the Hugging Face cache at %1. Models that transformers or "
                 "diffusers downloaded appear here; nothing is downloaded from here.")
                  .arg(QString::fromStdString(hub.string()))
            : tr("%n model(s) in the Hugging Face cache at %1", nullptr, static_cast<int>(repos.size()))
                  .arg(QString::fromStdString(hub.string())));
    for (const CachedRepo& repo : repos) {
        const QString opens = support(repo.snapshot);
        addRow({QString::fromStdString(repo.id), QString::fromStdString(repo.revision).left(12),
                QLocale().formattedDataSize(static_cast<qint64>(repo.bytes)), whatItIs(repo.snapshot), opens},
               QString::fromStdString(repo.snapshot.string()), opens);
    }
    m_table->resizeColumnsToContents();
}

void HfCacheDialog::addOllama(const std::filesystem::path& store) {
    const auto models = listOllamaModels(store);
    if (models.empty()) return;
    const QString before = m_label->text();
    m_label->setText(before + (before.endsWith('.') ? QStringLiteral(" ") : QStringLiteral(". ")) +
                     tr("%n Ollama model(s) at %1.", nullptr, static_cast<int>(models.size()))
                         .arg(QString::fromStdString(store.string())));
    for (const OllamaModel& m : models) {
        const auto [type, opens] = ggufSupport(m);
        addRow({QStringLiteral("ollama: ") + QString::fromStdString(m.name),
                QString::fromStdString(m.model.filename().string()).mid(7, 12),
                QLocale().formattedDataSize(static_cast<qint64>(m.bytes)), type, opens},
               m.present ? QString::fromStdString(m.model.string()) : QString(), opens);
    }
    m_table->resizeColumnsToContents();
}

void HfCacheDialog::addRow(const QStringList& cells, const QString& path, const QString& tip) {
    const int r = m_table->rowCount();
    m_table->setRowCount(r + 1);
    for (int c = 0; c < cells.size(); ++c) {
        auto* item = new QTableWidgetItem(cells[c]);
        item->setData(Qt::UserRole, path);
        item->setToolTip(c == 4 ? tip : path);
        m_table->setItem(r, c, item);
    }
}

void HfCacheDialog::applyFilter(const QString& text) {
    for (int r = 0; r < m_table->rowCount(); ++r)
        m_table->setRowHidden(r, !m_table->item(r, 0)->text().contains(text, Qt::CaseInsensitive));
}

void HfCacheDialog::openRow(int row) {
    if (row < 0 || row >= m_table->rowCount()) return;
    const QString folder = m_table->item(row, 0)->data(Qt::UserRole).toString();
    if (folder.isEmpty()) return;
    m_chosen = folder;
    m_chosenName = m_table->item(row, 0)->text();
    accept();
}

} // namespace attnlens::ui
