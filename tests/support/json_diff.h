#pragma once
// The keys of two JSON objects whose values differ, with both values ("layer: [3] vs [2]; …"): what a failed
// comparison of two saved sessions prints.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace attnlens::test {

inline QString diffJson(const QJsonObject& a, const QJsonObject& b) {
    QStringList out;
    QStringList keys = a.keys() + b.keys();
    keys.removeDuplicates();
    auto text = [](const QJsonValue& v) {
        return QString::fromUtf8(QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact));
    };
    for (const QString& k : keys)
        if (a.value(k) != b.value(k)) out << k + ": " + text(a.value(k)) + " vs " + text(b.value(k));
    return out.join("; ");
}

} // namespace attnlens::test
