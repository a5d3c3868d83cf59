#include "ui/t2i/t2i_word_chips.h"

#include "ui/t2i/t2i_document.h"
#include "ui/widgets/flow_layout.h"

#include <QApplication>
#include <QResizeEvent>
#include <QScrollArea>
#include <QToolButton>

namespace attnlens::ui {

T2iWordChips::T2iWordChips(T2iDocument* document, QWidget* parent)
    : QWidget(parent), m_doc(document), m_layout(new FlowLayout(this)) {
    setObjectName(QStringLiteral("wordChips"));
    m_layout->setContentsMargins(0, 0, 0, 0);
    connect(m_doc, &T2iDocument::runChanged, this, &T2iWordChips::rebuild);
    connect(m_doc, &T2iDocument::selectionChanged, this, [this] {
        if (m_special != m_doc->showSpecial()) rebuild();
        sync();
    });
    rebuild();
}

QToolButton* T2iWordChips::chip(int word) const {
    return word >= 0 && word < static_cast<int>(m_chips.size()) ? m_chips[size_t(word)] : nullptr;
}

void T2iWordChips::rebuild() {
    std::vector<std::string> words;
    for (const T2iWord& w : m_doc->words())
        words.push_back(w.text + "/" + std::to_string(w.tokens.size()));
    if (words == m_shown && m_special == m_doc->showSpecial() && !m_chips.empty()) return sync();
    m_shown = words;
    m_special = m_doc->showSpecial();
    for (QToolButton* b : m_chips)
        delete b;
    m_chips.assign(m_doc->words().size(), nullptr);
    for (int w : m_doc->visibleWords()) {
        const T2iWord& word = m_doc->words()[size_t(w)];
        auto* b = new QToolButton(this);
        b->setObjectName(QStringLiteral("word%1").arg(w));
        b->setText(QString::fromStdString(word.text));
        b->setCheckable(true);
        b->setAutoRaise(false);
        b->setToolTip(
            word.kind == T2iWord::Kind::Padding
                ? tr("%n padding token(s) after <end>", nullptr, static_cast<int>(word.tokens.size()))
                : tr("Click: its map over the image · shift-click: compare beside the chosen word"));
        connect(b, &QToolButton::clicked, this, [this, w] {
            if (QApplication::keyboardModifiers() & Qt::ShiftModifier)
                m_doc->toggleCompared(w);
            else
                m_doc->setWord(m_doc->word() == w && m_doc->compared().empty() ? -1 : w);
            sync(); // a click toggles the button itself: the document decides
        });
        m_layout->addWidget(b);
        m_chips[size_t(w)] = b;
    }
    sync();
    reportHeight();
}

QWidget* T2iWordChips::inScrollArea(int lines) {
    auto* scroll = new QScrollArea(parentWidget());
    scroll->setObjectName(QStringLiteral("wordChipsScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(this);
    const int cap = lines * (fontMetrics().height() + 16);
    connect(this, &T2iWordChips::heightChanged, scroll,
            [scroll, cap](int h) { scroll->setFixedHeight(std::min(h, cap)); });
    scroll->setFixedHeight(std::min(std::max(heightForWidth(400), 1), cap));
    return scroll;
}

void T2iWordChips::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    reportHeight();
}

void T2iWordChips::reportHeight() {
    const int h = std::max(heightForWidth(width()), 1);
    if (h == m_lastHeight) return;
    m_lastHeight = h;
    emit heightChanged(h);
}

void T2iWordChips::sync() {
    for (size_t w = 0; w < m_chips.size(); ++w) {
        QToolButton* b = m_chips[w];
        if (!b) continue;
        const bool chosen = static_cast<int>(w) == m_doc->word();
        b->setChecked(chosen || m_doc->compared().count(static_cast<int>(w)));
        QFont f = b->font();
        f.setBold(chosen);
        b->setFont(f);
    }
}

} // namespace attnlens::ui
