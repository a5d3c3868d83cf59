#pragma once
// Token lists between core (std::vector<std::string>, UTF-8) and Qt (QStringList). Header-only.

#include <QStringList>

#include <string>
#include <vector>

namespace attnlens::ui {

inline QStringList toQStringList(const std::vector<std::string>& v) {
    QStringList out;
    out.reserve(static_cast<qsizetype>(v.size()));
    for (const auto& s : v)
        out << QString::fromStdString(s);
    return out;
}

inline std::vector<std::string> toStdStrings(const QStringList& l) {
    std::vector<std::string> out;
    out.reserve(static_cast<size_t>(l.size()));
    for (const QString& s : l)
        out.push_back(s.toStdString());
    return out;
}

} // namespace attnlens::ui
