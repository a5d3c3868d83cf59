#include "core/contract/residual_trace.h"

#include "core/util/error.h"

#include <string>

namespace attnlens {

RowMatrix traceRows(const RowMatrix& m, const std::vector<int>& rows) {
    if (rows.empty()) return m;
    RowMatrix kept(static_cast<Eigen::Index>(rows.size()), m.cols());
    for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i] < 0 || rows[i] >= m.rows())
            throw Error("trace: row " + std::to_string(rows[i]) + " of a pass of " +
                        std::to_string(m.rows()) + " rows");
        kept.row(static_cast<Eigen::Index>(i)) = m.row(rows[i]);
    }
    return kept;
}

} // namespace attnlens
