#include "ui/widgets/page_parts.h"

#include "core/io/model_folder.h"
#include "ui/widgets/page_message.h"

#include <QFont>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

#include <cstring>

namespace attnlens::ui {

QFrame* panelFrame(QWidget* parent, const QString& name, int radius) {
    auto* f = new QFrame(parent);
    f->setObjectName(name);
    f->setStyleSheet(QStringLiteral("QFrame#%1 { background: palette(base); border: 1px solid palette(mid);"
                                    " border-radius: %2px; }")
                         .arg(name)
                         .arg(radius));
    return f;
}

QWidget* zoomButtons(QWidget* parent, const QString& name, std::function<void()> zoomOut,
                     std::function<void()> zoomIn, std::function<void()> fit) {
    auto* box = new QWidget(parent);
    box->setObjectName(name);
    auto* row = new QHBoxLayout(box);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(2);
    auto add = [&](const char* object, const QString& text, const QString& tip,
                   std::function<void()> action) {
        auto* b = new QToolButton(box);
        b->setObjectName(QString::fromLatin1(object));
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        QObject::connect(b, &QToolButton::clicked, box, [action = std::move(action)] { action(); });
        row->addWidget(b);
    };
    add("zoomOut", QStringLiteral("\u2212"), QObject::tr("Zoom out (−, Ctrl+wheel)"), std::move(zoomOut));
    add("zoomIn", QStringLiteral("+"), QObject::tr("Zoom in (+, Ctrl+wheel)"), std::move(zoomIn));
    add("zoomFit", QObject::tr("Fit"), QObject::tr("Fit to the pane (0)"), std::move(fit));
    return box;
}

Sidebar makeSidebar(QWidget* parent, int width) {
    auto* scroll = new QScrollArea(parent);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFixedWidth(width);
    auto* panel = new QWidget(scroll);
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(0, 0, 6, 0);
    scroll->setWidget(panel);
    return {scroll, panel, layout};
}

QString builtinModelPath(ModelKind kind, QString& error) {
    try {
        return QString::fromStdString(builtinModelDir(kind).string());
    } catch (const std::exception& e) {
        error =
            QObject::tr("The built-in %1 model is missing (%2). Open a model folder with File → Open model….")
                .arg(QString::fromUtf8(modelKindPurpose(kind).data()), QString::fromUtf8(e.what()));
        return {};
    }
}

void assembleWorkspace(QWidget* page, QWidget* topBar, PageMessage* message, QWidget* sidebar,
                       QWidget* centre) {
    auto* root = new QVBoxLayout(page);
    root->setContentsMargins(8, 8, 8, 8);
    root->setSpacing(6);
    root->addWidget(topBar);
    message->setAnchor(topBar); // floats over the page below the bar: showing it moves nothing
    auto* body = new QHBoxLayout;
    body->setSpacing(8);
    body->addWidget(sidebar);
    body->addWidget(centre, 1);
    root->addLayout(body, 1);
}

QToolButton* exportMenuButton(QWidget* parent, const QList<MenuEntry>& entries) {
    auto* button = new QToolButton(parent);
    button->setText(QObject::tr("Export"));
    button->setPopupMode(QToolButton::InstantPopup);
    auto* menu = new QMenu(button);
    for (const MenuEntry& e : entries) {
        if (e.action)
            menu->addAction(e.text, button, e.action);
        else
            menu->addSeparator();
    }
    button->setMenu(menu);
    return button;
}

QLabel* caption(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    QFont f = label->font();
    f.setBold(true);
    label->setFont(f);
    return label;
}

QLabel* hint(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    label->setWordWrap(true);
    mute(label);
    return label;
}

void mute(QWidget* widget) {
    widget->setForegroundRole(QPalette::PlaceholderText);
}

bool isDark(const QPalette& palette) {
    return palette.color(QPalette::Window).lightnessF() < palette.color(QPalette::WindowText).lightnessF();
}

QColor errorColor(const QPalette& palette) {
    return isDark(palette) ? QColor(242, 139, 130) : QColor(179, 38, 30);
}

QColor accentColor(const QPalette& palette) {
    return palette.color(QPalette::Highlight);
}

QColor currentColor(const QPalette& palette) {
    return errorColor(palette);
}

QColor frameColor(const QPalette& palette) {
    return mixColors(palette.color(QPalette::Base), palette.color(QPalette::WindowText), 0.18);
}

QColor faintFill(const QPalette& palette) {
    return mixColors(palette.color(QPalette::Base), palette.color(QPalette::WindowText), 0.06);
}

QColor mixColors(const QColor& a, const QColor& b, double t) {
    auto mix = [t](int x, int y) { return static_cast<int>(x * (1.0 - t) + y * t + 0.5); };
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

QImage toQImage(const RgbImage& image) {
    if (image.width <= 0) return {};
    QImage out(image.width, image.height, QImage::Format_RGB888);
    for (int y = 0; y < image.height; ++y)
        std::memcpy(out.scanLine(y), image.pixels.data() + static_cast<size_t>(y) * image.width * 3,
                    static_cast<size_t>(image.width) * 3);
    return out;
}

QImage toQImage(const ImageU8& image) {
    if (image.empty() || (image.channels != 1 && image.channels != 3)) return {};
    QImage out(image.width, image.height,
               image.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888);
    const size_t row = static_cast<size_t>(image.width) * image.channels;
    for (int y = 0; y < image.height; ++y)
        std::memcpy(out.scanLine(y), image.pixels.data() + y * row, row);
    return out;
}

ImageU8 fromQImage(const QImage& source) {
    const bool grey =
        source.format() == QImage::Format_Grayscale8 || source.format() == QImage::Format_Grayscale16;
    const QImage img = source.convertToFormat(grey ? QImage::Format_Grayscale8 : QImage::Format_RGB888);
    ImageU8 out(img.width(), img.height(), grey ? 1 : 3);
    const size_t row = static_cast<size_t>(img.width()) * out.channels;
    for (int y = 0; y < img.height(); ++y)
        std::memcpy(out.pixels.data() + y * row, img.constScanLine(y), row);
    return out;
}

} // namespace attnlens::ui
