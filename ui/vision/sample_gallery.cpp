#include "ui/vision/sample_gallery.h"

#include "core/io/model_folder.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPixmap>

namespace attnlens::ui {

namespace {
constexpr int kPathRole = Qt::UserRole;
constexpr int kClassRole = Qt::UserRole + 1;
constexpr int kIcon = 56;
} // namespace

SampleGallery::SampleGallery(QWidget* parent) : QListWidget(parent) {
    setViewMode(QListView::IconMode);
    setIconSize({kIcon, kIcon});
    setGridSize({kIcon + 10, kIcon + 10});
    setResizeMode(QListView::Adjust);
    setMovement(QListView::Static);
    setUniformItemSizes(true);
    setSelectionMode(QAbstractItemView::SingleSelection);
    connect(this, &QListWidget::itemClicked, this,
            [this](QListWidgetItem* item) { emit sampleChosen(item->data(kPathRole).toString()); });
}

int SampleGallery::loadSamples() {
    clear();
    m_problem.clear();
    QString root;
    try {
        root = QString::fromStdString((resourcesDir() / "samples").string());
    } catch (const std::exception& e) {
        m_problem = tr("No sample images: %1").arg(QString::fromUtf8(e.what()));
        return 0;
    }
    QStringList unreadable;
    const QDir samples(root);
    for (const QString& sub : samples.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QDir dir(samples.filePath(sub));
        QHash<QString, QString> classes;
        QFile index(dir.filePath(QStringLiteral("index.json")));
        if (index.open(QIODevice::ReadOnly))
            for (const auto& entry : QJsonDocument::fromJson(index.readAll()).array())
                classes.insert(entry.toObject().value("file").toString(),
                               entry.toObject().value("class").toString());
        for (const QString& file :
             dir.entryList({QStringLiteral("*.png"), QStringLiteral("*.jpg"), QStringLiteral("*.jpeg")},
                           QDir::Files, QDir::Name)) {
            const QString path = dir.filePath(file);
            QImage img(path);
            if (img.isNull()) {
                unreadable << file;
                continue;
            }
            // Tiny samples are enlarged without smoothing, like the main view.
            const QImage icon =
                img.scaled(kIcon, kIcon, Qt::KeepAspectRatio,
                           img.width() < kIcon ? Qt::FastTransformation : Qt::SmoothTransformation);
            auto* item = new QListWidgetItem(QIcon(QPixmap::fromImage(icon)), QString(), this);
            item->setData(kPathRole, path);
            item->setData(kClassRole, classes.value(file));
            item->setToolTip(
                classes.value(file).isEmpty() ? file : classes.value(file) + QStringLiteral(" — ") + file);
        }
    }
    if (!unreadable.isEmpty())
        m_problem =
            tr("%n sample image(s) could not be read: %1", nullptr, static_cast<int>(unreadable.size()))
                .arg(unreadable.join(QStringLiteral(", ")));
    return count();
}

QStringList SampleGallery::samplePaths() const {
    QStringList out;
    for (int i = 0; i < count(); ++i)
        out << item(i)->data(kPathRole).toString();
    return out;
}

QString SampleGallery::expectedClass(const QString& path) const {
    for (int i = 0; i < count(); ++i)
        if (item(i)->data(kPathRole).toString() == path) return item(i)->data(kClassRole).toString();
    return {};
}

} // namespace attnlens::ui
