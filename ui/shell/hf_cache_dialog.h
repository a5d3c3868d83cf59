#pragma once
// HfCacheDialog (File → Open from Hugging Face cache…): every model repository transformers and diffusers
// downloaded (core/io/hf_cache.h: $HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub), with its
// revision, size on disk, what it is (config.json's model_type or model_index.json's pipeline class) and
// whether this build opens it — and if not, why, in one line; then Ollama's models (core/io/ollama.h), named
// "ollama: NAME", their GGUF blob opened in place. Type to filter by name; double-click (or Open) opens the
// snapshot folder (or blob). Object names for tests: "filter", "repos" (the table), "cacheLabel".
//
// Threading: GUI thread only; the cache is read when the dialog opens (a directory walk, no weights).

#include <QDialog>

#include <filesystem>

class QLabel;
class QLineEdit;
class QTableWidget;

namespace attnlens::ui {

class HfCacheDialog : public QDialog {
    Q_OBJECT
public:
    // hub / ollama: the stores to read (empty: where transformers and Ollama keep them).
    explicit HfCacheDialog(QWidget* parent = nullptr, const std::filesystem::path& hub = {},
                           const std::filesystem::path& ollama = {});
    // The chosen repository's snapshot folder (after accept()), else empty.
    QString chosenFolder() const { return m_chosen; }
    QString chosenName() const { return m_chosenName; }
    QTableWidget* table() const { return m_table; }

private:
    void fill(const std::filesystem::path& hub);
    void addOllama(const std::filesystem::path& store); // its models, after the cache's
    void addRow(const QStringList& cells, const QString& path, const QString& tip);
    void applyFilter(const QString& text);
    void openRow(int row);
    QLineEdit* m_filter;
    QTableWidget* m_table;
    QLabel* m_label;
    QString m_chosen, m_chosenName;
};

} // namespace attnlens::ui
