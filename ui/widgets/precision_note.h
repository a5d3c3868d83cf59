#pragma once
// What a page shows of a bf16 load (Compute → BF16): the measured comparison with fp32
// (core/analysis/precision_parity) for its status line or notice and its model label's tooltip. Empty for
// fp32 loads. (Not appended to the model label: a longer label widened the pages' top bars.)

#include "core/analysis/precision_parity.h"
#include "core/util/error.h"

#include <QCoreApplication>
#include <QString>

#include <functional>

namespace attnlens::ui {

struct PrecisionNote {
    QString sentence; // "BF16 fast mode, measured against FP32 at load: max |Δ logits| …"

    bool empty() const { return sentence.isEmpty(); }

    // Runs the comparison (on the loading worker); a failure (e.g. an input the model cannot take, or no
    // memory for the second pass) still marks the model as bf16 and says why nothing was measured. A cancel
    // goes on to the loader.
    static PrecisionNote measure(const std::string& what, const std::function<PrecisionParity()>& compare) {
        PrecisionNote note;
        try {
            const PrecisionParity p = compare();
            note.sentence = QCoreApplication::translate("PrecisionNote",
                                                        "BF16 fast mode, measured against FP32 at load: %1.")
                                .arg(QString::fromStdString(describeParity(p, what)));
        } catch (const Cancelled&) {
            throw;
        } catch (const std::exception& e) {
            note.sentence = QCoreApplication::translate(
                                "PrecisionNote", "BF16 fast mode; its difference from fp32 could not be "
                                                 "measured: %1")
                                .arg(QString::fromUtf8(e.what()));
        }
        return note;
    }
};

} // namespace attnlens::ui
