#pragma once
// CandidateBars: the tokens a model could produce next, with probability bars — piece, bar, percentage; the
// one taken highlighted. Translate's step panel (the candidates of a decoding step) and the Text page (the
// next token of a GPT-2-style model) show the same widget. Object name "candidateBars". GUI thread only.

#include "core/decode/decode_session.h"

#include <QWidget>

#include <vector>

namespace attnlens::ui {

class CandidateBars : public QWidget {
    Q_OBJECT
public:
    explicit CandidateBars(QWidget* parent = nullptr);
    // `chosenId`: the token taken (bold, in the accent colour); -1 for none.
    void setCandidates(std::vector<TokenCandidate> candidates, int chosenId);
    const std::vector<TokenCandidate>& candidates() const { return m_candidates; }
    int chosenId() const { return m_chosen; }
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<TokenCandidate> m_candidates;
    int m_chosen = -1;
};

} // namespace attnlens::ui
