#pragma once
// What the Text page suites share: the fixtures' folder as the page takes it, and "no job left".

#include "support/waits.h"
#include "ui/shell/inference_worker.h"
#include "ui/text/text_document.h"
#include "ui/text/text_page.h"

#include <QString>

namespace texttest {

inline const QString kPageData = QStringLiteral(ATTNLENS_TEST_DATA "/text");

inline bool idle(const attnlens::ui::TextPage& page) {
    return page.worker()->pendingJobs() == 0 && !page.matrixPending();
}

// Shows the page, runs `text` (a decoder: with `tokens` generated) and waits for the run on screen.
inline void runAndWait(attnlens::ui::TextPage& page, const QString& text, int tokens) {
    page.show();
    WAIT_UNTIL(idle(page) && page.document()->hasModel());
    page.setText(text);
    page.setNewTokens(tokens);
    page.runText();
    WAIT_UNTIL(idle(page) && page.document()->run() &&
               page.document()->run()->generated() == (page.document()->model()->decoderOnly() ? tokens : 0));
}

// The ids of the tokens the page shows (up to its step).
inline std::vector<int> visibleIds(const attnlens::ui::TextDocument& doc) {
    return {doc.run()->ids.begin(), doc.run()->ids.begin() + doc.visibleTokens()};
}

} // namespace texttest
