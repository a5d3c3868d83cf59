#include "ui/widgets/map_difference_window.h"

#include "ui/widgets/difference_view.h"

#include <QHBoxLayout>
#include <QPushButton>
#include <QVBoxLayout>

namespace attnlens::ui {

MapDifferenceWindow::MapDifferenceWindow(const QString& title, QWidget* parent) : QDialog(parent) {
    setObjectName(QStringLiteral("differenceDialog"));
    setWindowTitle(title);
    auto* layout = new QVBoxLayout(this);
    m_view = new DifferenceView(this);
    layout->addWidget(m_view, 1);
    auto* row = new QHBoxLayout;
    auto* again = new QPushButton(tr("Pin the map now as A"), this);
    again->setObjectName(QStringLiteral("pinAgain"));
    auto* clear = new QPushButton(tr("Unpin"), this);
    clear->setObjectName(QStringLiteral("unpinMap"));
    connect(again, &QPushButton::clicked, this, &MapDifferenceWindow::pinRequested);
    connect(clear, &QPushButton::clicked, this, &MapDifferenceWindow::unpin);
    row->addStretch(1);
    row->addWidget(again);
    row->addWidget(clear);
    layout->addLayout(row);
    resize(1100, 480);
}

void MapDifferenceWindow::pin(const RowMatrix& map, const QString& description) {
    m_pin = Pin{map, description};
    refresh();
}

void MapDifferenceWindow::unpin() {
    m_pin.reset();
    close();
}

void MapDifferenceWindow::setCurrent(const RowMatrix& map, const QString& description, ColorMap colorMap) {
    m_current = map;
    m_currentDescription = description;
    m_colorMap = colorMap;
    refresh();
}

void MapDifferenceWindow::refresh() {
    if (!m_pin) {
        m_view->clear(tr("Pin a map as A."));
        return;
    }
    if (m_current.size() == 0) {
        m_view->clear(tr("A is pinned (%1); B appears with the next map.").arg(m_pin->description));
        return;
    }
    try {
        m_view->setGridDifference(m_pin->map, m_current, m_pin->description, m_currentDescription,
                                  m_colorMap);
    } catch (const std::exception& e) {
        m_view->clear(tr("A (%1) and B (%2) cannot be compared: %3")
                          .arg(m_pin->description, m_currentDescription, QString::fromUtf8(e.what())));
    }
}

} // namespace attnlens::ui
