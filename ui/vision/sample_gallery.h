#pragma once
// SampleGallery: thumbnails of the sample images under resources/samples/ (resourcesDir()); clicking
// one emits sampleChosen(path). A folder's index.json ({"file", "class"} entries) names the true class,
// available through expectedClass(). Threading: GUI thread only.

#include <QListWidget>

namespace attnlens::ui {

class SampleGallery : public QListWidget {
    Q_OBJECT
public:
    explicit SampleGallery(QWidget* parent = nullptr);

    // Scans <resources>/samples/*/ for PNG/JPEG files. Returns the number found (0 when absent); what
    // went wrong (no samples folder, unreadable files) is in problem().
    int loadSamples();
    const QString& problem() const { return m_problem; } // empty when every sample loaded
    QStringList samplePaths() const;
    // The true class of a sample from its folder's index.json, or empty.
    QString expectedClass(const QString& path) const;

signals:
    void sampleChosen(const QString& path);

private:
    QString m_problem;
};

} // namespace attnlens::ui
