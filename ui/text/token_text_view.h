#pragma once
// TokenTextView: the Text page's line of tokens — the prompt, then the generated tokens in the highlight
// colour, the newest underlined, the hovered one on a tinted background — laid out once per text and width,
// painted only where it is exposed. A 4 096-token prompt as one rich-text label was laid out again on every
// hover (21 ms); here a hover repaints two tokens.
//
//   view->setTokens(texts, promptLength, /*underlineLast=*/true, tr("tokens:"));
//   view->setHovered(3);
//
// It wraps at token boundaries and after a token holding a line break; its height follows its width
// (heightForWidth), for a scroll area that shows a few lines. Threading: GUI thread only.

#include <QStringList>
#include <QWidget>

#include <vector>

namespace attnlens::ui {

class TokenTextView : public QWidget {
    Q_OBJECT
public:
    explicit TokenTextView(QWidget* parent = nullptr);

    // texts: what each token stands for; the tokens from promptLength on are generated; prefix (may be
    // empty) is drawn in bold before them. Nothing is laid out again when all of it is unchanged.
    void setTokens(const QStringList& texts, int promptLength, bool underlineLast,
                   const QString& prefix = {});
    void clear() { setTokens({}, 0, false); }
    const QStringList& tokens() const { return m_texts; }
    QString plainText() const; // the prefix and the tokens as shown
    // The token on the tinted background; -1 none.
    void setHovered(int token);
    int hovered() const { return m_hovered; }
    // Where token i is drawn (widget coordinates); empty when i is out of range.
    QRect tokenRect(int i) const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return {}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    struct Layout {
        int width = -1;
        QRect prefix;
        std::vector<QRect> rects; // one per token
        int height = 0;
    };
    Layout layoutFor(int width) const;
    const Layout& current() const; // for the current width (a hidden widget gets no resize events)
    void relayout();

    QStringList m_texts;
    int m_prompt = 0;
    bool m_underlineLast = false;
    QString m_prefix;
    int m_hovered = -1;
    std::vector<int> m_advances; // of each token's shown text
    int m_prefixAdvance = 0;
    mutable Layout m_layout;
};

} // namespace attnlens::ui
