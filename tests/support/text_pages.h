#pragma once
// What the Text page suites share: the fixtures' folder as the page takes it, and "no job left".

#include "ui/shell/inference_worker.h"
#include "ui/text/text_page.h"

#include <QString>

namespace texttest {

inline const QString kPageData = QStringLiteral(ATTNLENS_TEST_DATA "/text");

inline bool idle(const attnlens::ui::TextPage& page) {
    return page.worker()->pendingJobs() == 0 && !page.matrixPending();
}

} // namespace texttest
